// The guest's /dev when the sentry serves its device nodes as files (sentry/device_fs.h): a
// tmpfs of its own in place of the host's /dev, made and filled by the (root) sentry before the
// guest exists and attached by init. Under the host's names it holds
//   - a node of the same device, owner and mode for each device node of the host's /dev,
//   - a copy of each symbolic link,
//   - a bind of each directory (with everything mounted below it, as /dev/pts and /dev/shm) and
//     of each other entry (including nodes the host mounted there, as a container's console),
//   - a bind of each of the sentry's device files,
// and nothing of the host's NVIDIA nodes. A device node of our own rather than a bind of the
// host's keeps /dev/ptmx working (the kernel finds the pseudo-terminals at "pts" beside the node
// opened, which a single-file bind has not). Read-only once made, like the host's /dev to an
// unprivileged guest. An entry the host adds to its /dev later does not appear in the guest's.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hostshim/unique_fd.h"
#include "sentry/host_nodes.h"

namespace nvsentry::sentry {

struct GuestDev {
  hostshim::UniqueFd tmpfs;          // the new /dev, a detached mount (O_CLOEXEC)
  std::vector<std::string> binds;    // host entries init binds, by name
  std::vector<std::string> devices;  // the device files init binds, by name
};

// In the sentry, as root, before the guest exists. `device_files`: the names the device files
// take; `hide`: the host's NVIDIA nodes (left out); `owner`, `group`: the guest's root's host ids
// (its /dev is its own; read-only once made all the same).
absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::vector<HostNode>& hide, uid_t owner, gid_t group);

// In init, in its own mount namespace, before anything else is mounted on or under /dev.
// `device_mount`: the detached filesystem of device files. Closes both mounts. Empty, or what
// failed and why.
std::string AttachGuestDev(int tmpfs, const std::vector<std::string>& binds,
                           const std::vector<std::string>& devices, int device_mount);

}  // namespace nvsentry::sentry
