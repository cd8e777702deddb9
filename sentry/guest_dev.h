// The guest's /dev when the sentry serves its device nodes as files (sentry/device_fs.h): a
// read-only filesystem of its own in place of the host's /dev, made by the (root) sentry before
// the guest exists and attached by init. Under the host's names it shows
//   - the host's device nodes and symbolic links, as they are,
//   - a bind of each directory (with everything mounted below it, as /dev/pts and /dev/shm) and
//     of each other entry the host mounted there (a container's console, say),
//   - a bind of each of the sentry's device files (in place of a host node of that name),
// and nothing of the host's NVIDIA nodes. Its root belongs to the guest's root, as a container's
// /dev does.
//
// Made as an overlay (overlayfs, read-only) of the host's /dev under a small layer that holds
// the device files' mount points and a whiteout for each NVIDIA node: a start-up cost of some
// 0.1 ms. Where the kernel has no overlayfs, a tmpfs with a copy of each node (owner, mode and
// device numbers; symbolic links copied too), some 0.9 ms. The overlay shows nodes the host adds
// to its /dev later, the copy does not; a node a host driver adds later under an NVIDIA name the
// device files do not take shows through the overlay (docs/security.md, "The guest's /dev").
// Either way a device node of the host's /dev, rather than a bind of the node alone, keeps
// /dev/ptmx working (the kernel finds the pseudo-terminals at "pts" beside the node opened).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {

struct GuestDev {
  hostshim::UniqueFd root;           // the new /dev, a detached mount (O_CLOEXEC)
  hostshim::UniqueFd layer;          // the overlay's layer (O_CLOEXEC): closed after the clone
  std::vector<std::string> binds;    // host entries init binds, by name
  std::vector<std::string> devices;  // the device files init binds, by name
  bool overlay = false;              // made as an overlay (else a copy)
};

// What the guest's /dev does with an entry of the host's /dev.
enum class Fate {
  kHide,    // an NVIDIA node: left out
  kDevice,  // a device file takes its name
  kLink,    // a symbolic link
  kNode,    // a device node of /dev's own filesystem
  kBind,    // a directory, or anything the host mounted there
};

struct HostEntry {
  std::string name;
  Fate fate = Fate::kBind;
  bool directory = false;
  struct stat st {};  // where the type did not decide (mode, device numbers, owner)
};

// The parts of the work that need neither the NVIDIA majors nor the guest's identity, so that two
// threads can do them while the sentry reads /proc/devices and makes the device files. In the
// sentry, as root, before the guest exists; `device_files`: the names the device files take.
//
// The draft: the host's /dev listed.
struct GuestDevDraft {
  hostshim::UniqueFd host;  // the host's /dev
  std::vector<HostEntry> entries;
};
absl::StatusOr<GuestDevDraft> DraftGuestDev(const std::vector<std::string>& device_files);
// The overlay's layer: a detached tmpfs holding the device files' mount points.
absl::StatusOr<hostshim::UniqueFd> MakeGuestDevLayer(const std::vector<std::string>& device_files);

// The rest, from the draft and the layer: an overlay, or the copy when `layer` is empty (asked
// for: NVSENTRY_TEST_HOOKS=copy-dev) or the kernel has no overlayfs. `nvidia_majors`:
// NvidiaCharMajors() (nodes of these majors are left out, as are nodes whose names are NVIDIA's);
// `owner`, `group`: the guest's root's host ids.
absl::StatusOr<GuestDev> FinishGuestDev(GuestDevDraft draft, hostshim::UniqueFd layer,
                                        const std::vector<std::string>& device_files,
                                        const std::set<unsigned>& nvidia_majors, uid_t owner,
                                        gid_t group);

// Both, one after the other.
absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::set<unsigned>& nvidia_majors, uid_t owner,
                                      gid_t group, bool copy = false);

// In init, in its own mount namespace, before anything else is mounted on or under /dev: a
// detached clone (recursive, flags as they are) of each host entry the guest's /dev binds, or -1
// for one the guest's identity cannot reach. Taken before the rest of the view becomes nodev
// (sentry/guest_mounts.cc), so that /dev/pts and a host's bound console keep their devices.
absl::StatusOr<std::vector<int>> CloneGuestDevBinds(const std::vector<std::string>& binds);

// Then, while /proc is still the one init inherited (the device files are staged there):
// `root`: GuestDev::root; `trees`: CloneGuestDevBinds(binds); `device_mount`: the detached
// filesystem of device files; `listed_fd`: where the sentry says kDeviceFilesListed once it has
// listed them (ListDeviceFiles, sentry/device_fs.h), which the binds wait for. Closes every fd
// it is given but `listed_fd`. Empty, or what failed and why.
std::string AttachGuestDev(int root, const std::vector<std::string>& binds,
                           const std::vector<int>& trees, const std::vector<std::string>& devices,
                           int device_mount, int listed_fd);

// The sentry's word to init, on init's control socket after "go", that the device files are
// listed.
inline constexpr char kDeviceFilesListed[] = "listed";

}  // namespace nvsentry::sentry
