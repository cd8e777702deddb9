#include "sentry/sandbox/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace nvsentry::sentry {
namespace {

struct Message {
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  Message(void* data, size_t len) : iov{data, len} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
};

}  // namespace

absl::Status SendWithFd(int sock, std::string_view text, int fd) {
  Message m(const_cast<char*>(text.data()), text.size());
  if (fd >= 0) {
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  } else {
    m.msg.msg_control = nullptr;
    m.msg.msg_controllen = 0;
  }
  if (sendmsg(sock, &m.msg, MSG_NOSIGNAL) != static_cast<ssize_t>(text.size()))
    return absl::ErrnoToStatus(errno, "sendmsg");
  return absl::OkStatus();
}

absl::StatusOr<FdMessage> ReceiveWithFd(int sock) {
  char data[4096];
  Message m(data, sizeof data);
  ssize_t n;
  do n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return absl::ErrnoToStatus(errno, "recvmsg");
  FdMessage out;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    out.fd.Reset(fd);
  }
  if (n == 0) return absl::NotFoundError("end of file");
  out.text.assign(data, static_cast<size_t>(n));
  return out;
}

}  // namespace nvsentry::sentry
