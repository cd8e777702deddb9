// Host NVIDIA device nodes that the guest must not reach by any path: every entry under /dev whose
// name is in the NVIDIA device namespace, and every character device whose major belongs to an
// NVIDIA/Tegra driver in /proc/devices. The guest's mount namespace covers each one.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nvsentry::sentry {

struct HostNode {
  std::string path;
  bool is_dir;
};

// `nvidia_majors`: NvidiaCharMajors().
std::vector<HostNode> FindHostNvidiaNodes(const std::set<unsigned>& nvidia_majors,
                                          const std::string& dev_root = "/dev");

// The character-device majors /proc/devices gives NVIDIA/Tegra drivers (empty on most hosts).
// Some 0.1 ms of the kernel's time a read, however short the file: read it once.
std::set<unsigned> NvidiaCharMajors();
// The same, from the text of a /proc/devices.
std::set<unsigned> NvidiaCharMajorsIn(std::string_view proc_devices);

}  // namespace nvsentry::sentry
