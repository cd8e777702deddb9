// The guest's /dev when the sentry serves its device nodes as files (sentry/devfs/device_fs.h): the
// device files' own filesystem, which the sentry makes before the guest exists and init attaches
// as /dev. Under the host's names it shows
//   - the host's device nodes and symbolic links, as they are (type, mode, owner, device
//     numbers, times; a node opens as the host's, the filesystem never sees it),
//   - a mount point for each directory (init binds the host's, with everything mounted below it,
//     as /dev/pts and /dev/shm) and for each other entry the host mounted there (a container's
//     console, say),
//   - the sentry's device files (in place of a host node of that name),
// and nothing of the host's NVIDIA nodes. Its root belongs to the guest's root, as a container's
// /dev does. Nothing can be made, removed, renamed or changed in it (EROFS).
//
// What it shows is the host's /dev as listed once at the start, on a thread of its own while the
// sentry reads the NVIDIA majors (a node the host adds later is not there). A node of the host's
// /dev itself, rather than a bind of the node alone, keeps /dev/ptmx working (the kernel finds
// the pseudo-terminals at "pts" beside the node opened). One mount, whose mount points the sentry
// has the kernel keep before init attaches it (DeviceFs::Prime): init's work for /dev is one
// attach and a bind per host directory (some 0.05 ms), where an overlay of the host's /dev with a
// bind per device file took 0.25-0.45 ms.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sentry/devfs/fuse_flat_dir.h"

namespace nvsentry::sentry {

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
  std::string link;   // kLink: the target
};

// The host's /dev listed, each entry's fate decided but for the NVIDIA majors. In the sentry,
// before the guest exists; `device_files`: the names the device files take. Needs neither the
// majors nor the guest's identity, so that a thread can do it while the sentry reads
// /proc/devices and makes the device files.
struct GuestDevDraft {
  std::vector<HostEntry> entries;
};
absl::StatusOr<GuestDevDraft> DraftGuestDev(const std::vector<std::string>& device_files);

// What the device files' filesystem shows besides them, and what init binds.
struct GuestDev {
  std::vector<FlatEntry> entries;  // for DeviceFs: the host's nodes, links and mount points
  std::vector<std::string> binds;  // host entries init binds on their mount points, by name
};

// The rest, from the draft: `nvidia_majors`: NvidiaCharMajors() (nodes of these majors are left
// out, as are nodes whose names are NVIDIA's).
GuestDev FinishGuestDev(GuestDevDraft draft, const std::set<unsigned>& nvidia_majors);

// Both, one after the other.
absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::set<unsigned>& nvidia_majors);

// In init, in its own mount namespace, before anything else is mounted on or under /dev: a
// detached clone (recursive, flags as they are) of each host entry the guest's /dev binds, or -1
// for one the guest's identity cannot reach. Taken before the rest of the view becomes nodev
// (sentry/sandbox/guest_mounts.cc), so that /dev/pts and a host's bound console keep their devices.
absl::StatusOr<std::vector<int>> CloneGuestDevBinds(const std::vector<std::string>& binds);

// Then: attaches `device_mount` (the device files' filesystem, detached) as /dev and mounts each
// clone of `trees` (CloneGuestDevBinds(binds)) on its mount point there. One the guest's identity
// could not reach shows as its empty mount point. Closes every fd it is given. Empty, or what
// failed and why.
std::string AttachGuestDev(int device_mount, const std::vector<std::string>& binds,
                           const std::vector<int>& trees);

// The guest's pseudo-terminals, in either device mode: a devpts instance of its own on /dev/pts
// (the host's /dev/ptmx node finds it there, "pts" beside it), at most kGuestPtys of them,
// instead of the host's, of which the guest could take every one the kernel allows (host logins
// then failed: ENOSPC); and, as bubblewrap's --dev does, the terminal it was given (`terminal`:
// TerminalForConsole(), or -1) bound on /dev/console, so that ttyname() still names it. Closes
// `terminal`. Empty, or what failed and why.
inline constexpr int kGuestPtys = 256;
std::string GiveTheGuestItsOwnPtys(int terminal);

// In init, before its view changes: the terminal nvsentry was given on standard output (else
// input, else error), as an O_PATH fd; -1 when none is a terminal.
int TerminalForConsole();

}  // namespace nvsentry::sentry
