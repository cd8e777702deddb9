// The pieces of a FUSE filesystem the sentry serves that do not depend on what its files mean:
// making it as a detached mount with the new mount API, and telling the server's own threads
// from its callers. Used by the guest's device files (sentry/devfs/device_fs.h) and by the
// simulated Jetson of `nvsentry fake-l4t` (sentry/fake_l4t/fake_l4t_fs.h).
#pragma once

#include <sys/types.h>

#include "absl/status/statusor.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {

// A filesystem before anyone serves it: the FUSE connection and the detached mount.
struct FuseMount {
  hostshim::UniqueFd connection;  // /dev/fuse, bound to the filesystem
  hostshim::UniqueFd mount;       // for move_mount (O_CLOEXEC)
  dev_t dev = 0;                  // its files' st_dev
};

// Whether device nodes the filesystem shows open (the guest's /dev shows the host's) or not.
enum class FuseMountKind { kNoDevices, kWithDevices };

// Makes the filesystem: root-owned, `allow_other` and `default_permissions` (the kernel checks
// the modes and owners the server reports, so the server never sees a request it would refuse),
// mounted nosuid, noexec and, unless `kind` says otherwise, nodev. `what` names it in errors. An
// error when this process may not (no CAP_SYS_ADMIN, no FUSE in the kernel, no /dev/fuse).
absl::StatusOr<FuseMount> MakeFuseMount(const char* what,
                                        FuseMountKind kind = FuseMountKind::kNoDevices);

// Attaches a detached mount at `dir` (move_mount).
absl::Status AttachMount(const FuseMount& m, const char* dir);

// True when `tid` (a request's caller) is a thread of this process: the sentry's answer to
// "which open is this file" (lseek SEEK_DATA, IdentifyDeviceFile) goes to its own threads only.
bool FromOwnThread(pid_t tid);

}  // namespace nvsentry::sentry
