#include "sentry/signal_origin.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace nvsentry::sentry {
namespace {

std::string PidNamespace(std::string_view proc_entry) {
  char buf[64] = {};
  std::string link = std::string(proc_entry) + "/ns/pid";
  return readlink(link.c_str(), buf, sizeof buf - 1) > 0 ? buf : "";
}

// A user process (kernel threads have an empty command line).
bool IsUserProcess(std::string_view proc_entry) {
  std::ifstream in(std::string(proc_entry) + "/cmdline");
  return in.get() != std::char_traits<char>::eof();
}

// The last number of the NSpid line of /proc/PID/status: the pid in its innermost namespace.
pid_t InnermostPid(const std::filesystem::path& proc_entry) {
  std::ifstream in(proc_entry / "status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("NSpid:")) continue;
    size_t last = line.find_last_of(" \t");
    pid_t pid = 0;
    std::from_chars(line.data() + last + 1, line.data() + line.size(), pid);
    return pid;
  }
  return 0;
}

}  // namespace

bool SentByGuest(pid_t sender, pid_t guest_init) {
  if (sender <= 0) return false;
  const std::string guest_ns = PidNamespace("/proc/" + std::to_string(guest_init));
  if (guest_ns.empty()) return false;
  const std::string here = "/proc/" + std::to_string(sender);
  if (access(here.c_str(), F_OK) == 0 && PidNamespace(here) != guest_ns && IsUserProcess(here))
    return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] < '1' || name[0] > '9') continue;
    if (PidNamespace(entry.path().string()) == guest_ns && InnermostPid(entry.path()) == sender)
      return true;
  }
  return false;
}

}  // namespace nvsentry::sentry
