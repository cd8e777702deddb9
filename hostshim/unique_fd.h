// An owned file descriptor: closed exactly once, when its owner goes or on Reset. Moves, never
// copies. Used wherever the sentry holds an fd of its own (eventfds, pidfds, sockets, epolls).
#pragma once

#include <unistd.h>

#include <utility>

namespace nvsentry::hostshim {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.Release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    Reset(o.Release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes it.
  [[nodiscard]] int Release() { return std::exchange(fd_, -1); }
  // Closes what it holds and takes `fd`.
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace nvsentry::hostshim
