#include "sentry/sandbox/host_nodes.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <set>
#include <string_view>
#include <utility>

#include "abi/catalogue.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace nvsentry::sentry {

std::set<unsigned> NvidiaCharMajorsIn(std::string_view proc_devices) {
  std::set<unsigned> majors;
  bool chars = false;
  // (Debian's Abseil has its own string_view.)
  const absl::string_view text(proc_devices.data(), proc_devices.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "Character"))
      chars = true;
    else if (absl::StartsWith(line, "Block"))
      chars = false;
    if (!chars) continue;
    // A driver's line: its major, right-aligned, then its name.
    std::pair<absl::string_view, absl::string_view> major_name =
        absl::StrSplit(absl::StripAsciiWhitespace(line), absl::MaxSplits(' ', 1));
    unsigned major;
    if (!absl::SimpleAtoi(major_name.first, &major)) continue;
    const absl::string_view name = absl::StripAsciiWhitespace(major_name.second);
    for (absl::string_view key : {"nvidia", "nvhost", "nvmap", "nvgpu", "host1x", "tegra"})
      if (absl::StrContains(name, key)) majors.insert(major);
  }
  return majors;
}

std::set<unsigned> NvidiaCharMajors() {
  std::string text;
  const int fd = open("/proc/devices", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return NvidiaCharMajorsIn(text);
}

namespace {

// Walks the directory open as `dir` (`rel`: its path under the root, "" for the root). A start-up
// cost of every run: entries are judged by their directory type where the name does not already
// decide, and a node is stat'ed only when some driver's major is NVIDIA's.
void Walk(int dir, const std::string& root, const std::string& rel,
          const std::set<unsigned>& majors, std::vector<HostNode>& nodes) {
  DIR* d = fdopendir(dir);
  if (d == nullptr) {
    close(dir);
    return;
  }
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string child = rel + "/" + name;
    unsigned char type = e->d_type;
    struct stat st;
    const bool need_stat = type == DT_UNKNOWN || (type == DT_CHR && !majors.empty());
    if (need_stat) {
      if (fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISDIR(st.st_mode)   ? DT_DIR
             : S_ISLNK(st.st_mode) ? DT_LNK
             : S_ISCHR(st.st_mode) ? DT_CHR
                                   : DT_REG;
    }
    if (type == DT_LNK) continue;  // a mount would land on the link's target instead
    const bool is_dir = type == DT_DIR;
    // Pseudo-terminals, shared memory and message queues are never NVIDIA's; don't walk them.
    if (is_dir &&
        (child == "/pts" || child == "/shm" || child == "/mqueue" || child == "/hugepages"))
      continue;
    const bool by_name = abi::LooksLikeNvidiaNode("/dev" + child);
    const bool by_major = type == DT_CHR && need_stat && majors.count(major(st.st_rdev)) > 0;
    if (by_name || by_major) {
      nodes.push_back({root + child, is_dir});
      continue;  // a directory's cover hides its contents
    }
    if (is_dir) {
      const int sub = openat(dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub >= 0) Walk(sub, root, child, majors, nodes);  // unreadable: skipped
    }
  }
  closedir(d);
}

}  // namespace

std::vector<HostNode> FindHostNvidiaNodes(const std::set<unsigned>& nvidia_majors,
                                          const std::string& dev_root) {
  std::vector<HostNode> nodes;
  const int root = open(dev_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root >= 0) Walk(root, dev_root, "", nvidia_majors, nodes);
  return nodes;
}

}  // namespace nvsentry::sentry
