// `nvsentry fake-l4t DIR`'s filesystem: the six Linux for Tegra nodes of a fake Jetson
// (hostshim/fake_l4t/fake_jetson.h) as regular files of a FUSE filesystem attached at DIR, so
// that a host backend can be proved over real ioctl(2) calls on real fds.
//
// Each FUSE OPEN of a file is a new session of its node, each RELEASE (the last reference to that
// open file anywhere is gone) ends it. An ioctl on a regular FUSE file reaches the server only in
// the kernel's restricted form: the argument's _IOC_SIZE(code) bytes are copied in (_IOW) and out
// (_IOR) by the kernel, the request names the calling thread, and pointers inside the argument
// are the caller's addresses (read and written with process_vm_readv/writev: the server must be
// allowed to, root here); an _IO code passes its raw argument value. Served by several threads
// (libfuse's multi-threaded loop): a call that names an fd asks another serving thread which open
// it is, and a wait parks in the simulator and is answered from the thread that completes it, or
// with EINTR when the kernel interrupts it (a signal to the caller).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hostshim/fake_l4t/fake_jetson.h"

namespace nvsentry::sentry {

class FakeL4tFs {
 public:
  // Makes the filesystem and attaches it at `dir` (an existing directory); needs CAP_SYS_ADMIN
  // and /dev/fuse.
  static absl::StatusOr<std::unique_ptr<FakeL4tFs>> Mount(const std::string& dir,
                                                          hostshim::fake_l4t::FakeJetson& fake);
  ~FakeL4tFs();
  FakeL4tFs(const FakeL4tFs&) = delete;
  FakeL4tFs& operator=(const FakeL4tFs&) = delete;

  // The filesystem's st_dev (its files' device number).
  dev_t dev() const;

  // Serves until the filesystem is unmounted (and its last file closed). Blocks.
  int Serve();

  struct Impl;

 private:
  explicit FakeL4tFs(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvsentry::sentry
