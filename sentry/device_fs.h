// The guest's device nodes as files of a FUSE filesystem that the sentry serves, so that opening
// one is an ordinary open the kernel resolves (symlinks, /proc/self/fd reopens, io_uring, any
// flags) and no open of any other file ever leaves the kernel.
//
// The filesystem is made by the sentry before the guest exists (the new mount API: it needs
// CAP_SYS_ADMIN over the sentry's own mount namespace, so only a root-started nvsentry has it) and
// handed to the guest's init as a detached mount, which init attaches in the guest's /dev
// (sentry/guest_dev.h). Made by the sentry, its requests name callers by host thread ids, the
// numbers seccomp notifications carry too.
//
// What each open means is the handler's: OPEN asks it for a session (or an errno, which the
// guest's open returns), RELEASE (the last reference to that open file anywhere is gone) ends it.
// The files have no data: read and write fail with EINVAL, as on a Tegra device node; ioctls the
// seccomp filter does not trap fail with ENOTTY. The device's own ioctls never come here: the
// filter traps them, and the sentry finds the session of the guest's fd with IdentifyDeviceFile.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/unique_fd.h"
#include "sentry/fuse_mount.h"

namespace nvsentry::sentry {

// What the files mean; called on the filesystem's thread, one request at a time. Must not block
// on the guest.
class DeviceFileHandler {
 public:
  virtual ~DeviceFileHandler() = default;
  // A new open of `dev` by host thread `tid` (0 when it is not known). The file's handle (any
  // value but 0) or -errno.
  virtual int64_t OpenFile(const abi::DeviceDesc& dev, int flags, pid_t tid) = 0;
  // The open `handle` named is gone.
  virtual void ReleaseFile(uint64_t handle) = 0;
};

// A handler named after the filesystem is already being served (the launcher serves it while the
// sentry is still being made): until Set, OPEN and RELEASE wait for it. Neither can come before
// the guest runs, which is soon after.
class DeferredDeviceFileHandler final : public DeviceFileHandler {
 public:
  // Once; `handler` outlives this.
  void Set(DeviceFileHandler& handler);
  int64_t OpenFile(const abi::DeviceDesc& dev, int flags, pid_t tid) override;
  void ReleaseFile(uint64_t handle) override;

 private:
  DeviceFileHandler& Wait();
  absl::Mutex mu_;
  DeviceFileHandler* handler_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// The filesystem before anyone serves it: the FUSE connection and the detached mount.
using DeviceFsMount = FuseMount;

// Makes the filesystem (one file per device of the catalogue that lives directly in /dev). An
// error when this process may not (no CAP_SYS_ADMIN, no FUSE in the kernel, no /dev/fuse).
absl::StatusOr<DeviceFsMount> MakeDeviceFs();

// The names (relative to /dev) of the files it holds.
std::vector<std::string> DeviceFileNames();

// Serves the filesystem on a thread of its own until the connection ends (the guest's last mount
// of it is gone).
class DeviceFs {
 public:
  DeviceFs(hostshim::UniqueFd connection, DeviceFileHandler& handler);
  ~DeviceFs();
  DeviceFs(const DeviceFs&) = delete;
  DeviceFs& operator=(const DeviceFs&) = delete;
  // Whether a thread serves it (libfuse may refuse the connection).
  bool serving() const { return thread_.joinable(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

// Lists the files once (READDIRPLUS) through `mount` (the filesystem's detached mount, or its
// root opened), from a thread other than the one serving it: the kernel then keeps each file's
// entry and attributes for good, so that looking one up (init binding it into the guest's /dev,
// sentry/guest_dev.h) asks the filesystem nothing. Reads until `count` files were named, not to
// the end: the read that finds the end would be one more round trip for nothing. False when it
// could not list them all.
bool ListDeviceFiles(int mount, size_t count);

// The handle OpenFile gave the open file `fd` (a copy of the guest's, in the sentry) refers to,
// or -errno. Answered by the filesystem, so only for files of it (check st_dev first). The
// file's position is 0 again afterwards.
int64_t IdentifyDeviceFile(int fd);

}  // namespace nvsentry::sentry
