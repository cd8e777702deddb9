#include "sentry/fd_passing.h"

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

bool SendWithFd(int sock, std::string_view text, int fd) {
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
  return sendmsg(sock, &m.msg, MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

bool ReceiveWithFd(int sock, std::string* text, int* fd) {
  char data[4096];
  Message m(data, sizeof data);
  ssize_t n;
  do n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  text->assign(data, static_cast<size_t>(n));
  *fd = -1;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
    memcpy(fd, CMSG_DATA(c), sizeof(int));
  return true;
}

}  // namespace nvsentry::sentry
