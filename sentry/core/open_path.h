// Decides what a trapped open refers to, from what the guest passed: the absolute, lexically
// normalised path (resolved against the guest's cwd or dirfd when relative), without following
// symlinks. Pure functions over strings so that they can be tested on their own.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nvsentry::sentry {

// Joins `path` onto `base` (when relative) and removes ".", ".." and repeated slashes. A trailing
// slash is reported, since it makes a device path fail with ENOTDIR.
struct NormalPath {
  std::string path;
  bool trailing_slash;
};
NormalPath NormalizePath(std::string_view base, std::string_view path);

// Cheap test that lets most opens continue without any further work: every NVIDIA node name
// contains "nv".
inline bool MayNameNvidiaNode(std::string_view path) {
  return path.find("nv") != std::string_view::npos;
}

}  // namespace nvsentry::sentry
