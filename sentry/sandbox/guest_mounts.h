// The guest's view of the filesystem, set up by its init inside the sandbox's own mount namespace
// (owned by the guest's user namespace, so nothing here reaches the host's mounts). In order:
//   1. mounts become slaves: the host's later mounts still show up, ours never leave;
//   2. with device files (sentry/sandbox/guest_dev.h), a /dev of the guest's own that holds them
//   and the
//      host's other entries; then every host NVIDIA node left is covered (a file by /dev/null, a
//      directory by an empty tmpfs);
//   3. the sources of --bind / --ro-bind are opened (O_PATH) in that view, as the guest's identity
//      sees it: a bind can neither uncover a host node nor miss what --private-tmp hides next;
//   4. --ro-root: every mount of the host's tree becomes read-only (mount_setattr, recursive);
//   5. --private-tmp: a fresh tmpfs on /tmp, /var/tmp and /dev/shm;
//   6. the binds, in command-line order, writable or read-only as asked (a writable one the
//      guest's identity may not write is bound, with a warning saying who the guest is);
//   7. a /proc of the guest's PID namespace.
// Defaults (no option): the host's tree as it is, under the guest's identity.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sentry/sandbox/host_nodes.h"

namespace nvsentry::sentry {

struct BindMount {
  std::string source;  // absolute (the command line's relative paths resolved by the sentry)
  std::string target;  // absolute, in the guest's view
  bool read_only = false;
};

struct MountPlan {
  std::vector<HostNode> hide;  // host NVIDIA nodes to cover
  // The sentry's device files (sentry/devfs/device_fs.h), the guest's whole /dev
  // (sentry/sandbox/guest_dev.h), as a detached mount; -1 when the sentry traps the guest's opens
  // instead.
  int device_mount = -1;
  std::vector<std::string> dev_binds;     // host entries to bind into it
  std::vector<std::string> device_files;  // the device files' names in it
  bool read_only_root = false;
  bool private_tmp = false;
  std::vector<BindMount> binds;
  // Who the guest is and what to do, for a path its identity is refused (RefusedAdvice,
  // sentry/sandbox/identity.h): a bind's source or target; and for a --bind it may not write.
  std::string refused_advice;
};

// The directories --private-tmp replaces.
inline constexpr const char* kPrivateTmpDirs[] = {"/tmp", "/var/tmp", "/dev/shm"};

// In init (single-threaded, in its own mount namespace). Empty, or what failed and why. With a
// device mount, `device_mount_ready` is called before the mount is first used (attached): the
// sentry lists its mount points meanwhile (DeviceFs::Prime); false when it will not (it is gone).
std::string SetUpGuestMounts(const MountPlan& plan,
                             const std::function<bool()>& device_mount_ready = {});

}  // namespace nvsentry::sentry
