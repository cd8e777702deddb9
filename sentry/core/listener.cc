#include "sentry/core/listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace nvsentry::sentry {

int Listener::Receive(seccomp_notif* req) const {
  std::memset(req, 0, sizeof(*req));
  if (ioctl(fd_, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) return 0;
  return errno;
}

bool Listener::IdValid(uint64_t id) const {
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool Listener::Pending() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

bool Listener::HungUp() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

bool Listener::Send(seccomp_notif_resp* resp) const {
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0;
}

bool Listener::Continue(uint64_t id) const {
  seccomp_notif_resp r{};
  r.id = id;
  r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return Send(&r);
}

bool Listener::Return(uint64_t id, int64_t value) const {
  seccomp_notif_resp r{};
  r.id = id;
  r.val = value;
  return Send(&r);
}

bool Listener::Fail(uint64_t id, int err) const {
  seccomp_notif_resp r{};
  r.id = id;
  r.error = -err;
  return Send(&r);
}

int Listener::AddFdAndReturn(uint64_t id, int fd, bool cloexec) const {
  seccomp_notif_addfd a{};
  a.id = id;
  a.flags = SECCOMP_ADDFD_FLAG_SEND;
  a.srcfd = static_cast<uint32_t>(fd);
  a.newfd_flags = cloexec ? O_CLOEXEC : 0;
  int r = ioctl(fd_, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
  return r >= 0 ? r : -errno;
}

int Listener::AddFd(uint64_t id, int fd, bool cloexec) const {
  seccomp_notif_addfd a{};
  a.id = id;
  a.srcfd = static_cast<uint32_t>(fd);
  a.newfd_flags = cloexec ? O_CLOEXEC : 0;
  int r = ioctl(fd_, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
  return r >= 0 ? r : -errno;
}

bool Listener::SetSyncWakeUp() const {
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
}

}  // namespace nvsentry::sentry
