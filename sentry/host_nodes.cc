#include "sentry/host_nodes.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "abi/catalogue.h"

namespace nvsentry::sentry {
namespace {

std::set<unsigned> NvidiaCharMajors() {
  std::set<unsigned> majors;
  std::ifstream in("/proc/devices");
  std::string line;
  bool chars = false;
  while (std::getline(in, line)) {
    if (line.starts_with("Character"))
      chars = true;
    else if (line.starts_with("Block"))
      chars = false;
    unsigned major;
    char name[128];
    if (!chars || sscanf(line.c_str(), "%u %127s", &major, name) != 2) continue;
    std::string n(name);
    for (const char* key : {"nvidia", "nvhost", "nvmap", "nvgpu", "host1x", "tegra"})
      if (n.find(key) != std::string::npos) majors.insert(major);
  }
  return majors;
}

}  // namespace

std::vector<HostNode> FindHostNvidiaNodes(const std::string& dev_root) {
  namespace fs = std::filesystem;
  std::vector<HostNode> nodes;
  const std::set<unsigned> majors = NvidiaCharMajors();
  std::error_code ec;
  auto it =
      fs::recursive_directory_iterator(dev_root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& e = *it;
    std::string rel = e.path().string().substr(dev_root.size());
    std::string as_dev = "/dev" + rel;
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0) continue;
    bool is_dir = S_ISDIR(st.st_mode);
    // Pseudo-terminals, shared memory and message queues are never NVIDIA's; don't walk them.
    if (is_dir && (rel == "/pts" || rel == "/shm" || rel == "/mqueue" || rel == "/hugepages")) {
      it.disable_recursion_pending();
      continue;
    }
    bool by_name = abi::LooksLikeNvidiaNode(as_dev);
    bool by_major = S_ISCHR(st.st_mode) && majors.count(major(st.st_rdev)) > 0;
    if (S_ISLNK(st.st_mode)) continue;  // a mount would land on the link's target instead
    if (by_name || by_major) {
      nodes.push_back({e.path().string(), is_dir});
      if (is_dir) it.disable_recursion_pending();  // the directory's cover hides its contents
    }
  }
  return nodes;
}

}  // namespace nvsentry::sentry
