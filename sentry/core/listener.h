// The seccomp user-notification listener: receive a trapped syscall, answer it (a value, an errno,
// "continue natively", or a new fd placed atomically with the answer), and ask whether it is still
// pending. Thin and allocation-free: every trapped call goes through here twice.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>

namespace nvsentry::sentry {

// The kernel's restart code: answering with it makes the guest's syscall restart after a signal
// handler (SA_RESTART) or fail with EINTR, exactly as an interrupted driver wait does.
constexpr int kErestartSys = 512;

class Listener {
 public:
  explicit Listener(int fd) : fd_(fd) {}
  int fd() const { return fd_; }

  // Blocks for the next notification. Returns 0, or an errno: ENOENT/EINTR mean "try again".
  int Receive(seccomp_notif* req) const;
  bool IdValid(uint64_t id) const;
  // True when a notification waits that no thread has received yet.
  bool Pending() const;
  // True once no task uses the filter any more: Receive then fails at once, forever.
  bool HungUp() const;
  // The answers; each returns false if the call is no longer pending (the guest went away).
  bool Continue(uint64_t id) const;
  bool Return(uint64_t id, int64_t value) const;
  bool Fail(uint64_t id, int err) const;  // err > 0; the guest sees -1 with errno err
  // Places `fd` (a sentry fd) in the guest and answers the call with the new number. Returns the
  // guest's fd number or -errno.
  int AddFdAndReturn(uint64_t id, int fd, bool cloexec) const;
  // Installs a copy of `fd` in the caller of notification `id` without answering it; the new fd
  // number or -errno.
  int AddFd(uint64_t id, int fd, bool cloexec) const;
  // Asks the kernel to wake the supervisor on the guest's CPU (Linux 6.6+). False if unsupported.
  bool SetSyncWakeUp() const;

 private:
  bool Send(seccomp_notif_resp* resp) const;
  int fd_;
};

}  // namespace nvsentry::sentry
