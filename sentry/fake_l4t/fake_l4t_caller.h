// The caller of one of the fake Jetson's FUSE ioctls (sentry/fake_l4t/fake_l4t_fs.h), as the
// translation sees it (hostshim/fake_l4t/request.h): its memory, read and written with
// process_vm_readv and process_vm_writev on the thread the request names, and its fds, fetched with
// pidfd_getfd and identified as opens of the fake's own mount (st_dev, then lseek SEEK_DATA, which
// another of the server's threads answers with the open's handle).
#pragma once

#include <sys/types.h>

#include "hostshim/fake_l4t/request.h"

namespace nvsentry::sentry {

// Identifications at once (each holds a serving thread until another answers its lseek); past
// it an fd is refused as no open of the fake, with a log line, rather than the server starving.
inline constexpr int kMaxIdentifying = 32;

// The thread group of thread `tid`, from /proc (-1 when it is gone).
pid_t TgidOf(pid_t tid);

class FakeL4tCaller : public hostshim::fake_l4t::L4tCaller {
 public:
  // `tid`: the request's thread (0 when the kernel could not name it); `dev`: the mount's st_dev.
  FakeL4tCaller(pid_t tid, dev_t dev) : tid_(tid), dev_(dev) {}
  pid_t tid() const override { return tid_; }
  bool Read(uint64_t addr, std::span<uint8_t> dst) override;
  bool Write(uint64_t addr, std::span<const uint8_t> src) override;
  bool Transfer(std::span<const hostshim::fake_l4t::CallerPiece> pieces, bool to_caller) override;
  // 0 also when kMaxIdentifying identifications are under way.
  uint64_t SessionOf(int32_t fd) override;
  bool IsOpenFd(int32_t fd) override;

 private:
  const pid_t tid_;
  const dev_t dev_;
};

}  // namespace nvsentry::sentry
