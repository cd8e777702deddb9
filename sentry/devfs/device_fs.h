// The guest's device nodes as files of a FUSE filesystem that the sentry serves, so that opening
// one is an ordinary open the kernel resolves (symlinks, /proc/self/fd reopens, io_uring, any
// flags) and no open of any other file ever leaves the kernel.
//
// The filesystem is the guest's whole /dev: beside the device files it shows the host's /dev as
// sentry/sandbox/guest_dev.h decides (its nodes, links and the mount points of what init binds
// there). It is made by the sentry before the guest exists (the new mount API: it needs
// CAP_SYS_ADMIN over the sentry's own mount namespace, so only a root-started nvsentry has it) and
// handed to the guest's init as a detached mount, which init attaches as /dev. Made by the sentry,
// its requests name callers by host thread ids, the numbers seccomp notifications carry too.
//
// What each open means is the handler's: OPEN asks it for a session (or an errno, which the
// guest's open returns), RELEASE (the last reference to that open file anywhere is gone) ends it.
// The files have no data: read and write fail with EINVAL, as on a Tegra device node; ioctls the
// seccomp filter does not trap fail with ENOTTY. The device's own ioctls never come here: the
// filter traps them, and the sentry finds the session of the guest's fd with IdentifyDeviceFile.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/unique_fd.h"
#include "sentry/devfs/fuse_flat_dir.h"
#include "sentry/devfs/fuse_mount.h"

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

// Makes the filesystem, to be the guest's /dev: mounted nosuid and noexec but with devices (the
// host's nodes it shows open as the host's). An error when this process may not (no
// CAP_SYS_ADMIN, no FUSE in the kernel, no /dev/fuse).
absl::StatusOr<DeviceFsMount> MakeDeviceFs();

// The names (relative to /dev) of the device files it holds.
std::vector<std::string> DeviceFileNames();

// The filesystem's server. Its root holds one file per device of the catalogue that lives
// directly in /dev and, after them, `others`: the rest of the guest's /dev (the host's nodes,
// links and mount points, sentry/sandbox/guest_dev.h); the root belongs to `root_uid`:`root_gid`.
class DeviceFs {
 public:
  DeviceFs(hostshim::UniqueFd connection, DeviceFileHandler& handler, std::vector<FlatEntry> others,
           uid_t root_uid, gid_t root_gid);
  ~DeviceFs();
  DeviceFs(const DeviceFs&) = delete;
  DeviceFs& operator=(const DeviceFs&) = delete;

  // Before the guest exists, while nobody else uses the filesystem (`mount`, its detached mount,
  // is the sentry's and a waiting init's, which attaches it only after this): answers the kernel's
  // first requests on this thread while another, on the same CPU, lists the root once: to the
  // server's own threads the listing holds the mount points alone (FlatEntry::mount_point,
  // FlatDir::OpenDir), one READDIRPLUS whatever their number. The kernel then keeps those entries
  // and the root's attributes, so that attaching the filesystem and mounting on those entries
  // (init's binds and /dev/pts, sentry/sandbox/guest_dev.h) asks it nothing. (Not the whole root:
  // the kernel's own work for 150 entries took 0.4 ms; nor a lookup per name: a request each. The
  // guest's first lookup of any other name is a request.) False when it could not: the filesystem
  // works all the same (a request per first lookup), unless the serving failed. That ends the
  // filesystem (Serve then says false), and `before_giving_up` is called first: it must end
  // whatever else holds the connection (init's copy, until init closes it), so that ending it
  // ends the lister's requests.
  bool Prime(int mount, const std::function<void()>& before_giving_up);
  // The connection's fd (libfuse's), or -1.
  int ConnectionFd() const;
  // Serves it from now on, on a thread of its own, until the connection ends (the guest's last
  // mount of it is gone). False when libfuse refused the connection or Prime's serving failed.
  bool Serve();

  struct Impl;  // the server's state, which its request handlers reach

 private:
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

// The handle OpenFile gave the open file `fd` (a copy of the guest's, in the sentry) refers to,
// or -errno. Answered by the filesystem, so only for files of it (check st_dev first). The
// file's position is 0 again afterwards.
int64_t IdentifyDeviceFile(int fd);

}  // namespace nvsentry::sentry
