// Host NVIDIA device nodes that the guest must not reach by any path: every entry under /dev whose
// name is in the NVIDIA device namespace, and every character device whose major belongs to an
// NVIDIA/Tegra driver in /proc/devices. The guest's mount namespace covers each one.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace nvsentry::sentry {

struct HostNode {
  std::string path;
  bool is_dir;
};

std::vector<HostNode> FindHostNvidiaNodes(const std::string& dev_root = "/dev");

// The character-device majors /proc/devices gives NVIDIA/Tegra drivers (empty on most hosts).
std::set<unsigned> NvidiaCharMajors();

}  // namespace nvsentry::sentry
