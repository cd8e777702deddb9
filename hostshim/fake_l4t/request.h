// One L4T ioctl as the fake Jetson (fake_jetson.h) receives it: the argument bytes the kernel
// copied (FUSE's restricted ioctls copy _IOC_SIZE(code) bytes each way), the caller whose memory
// the argument's user pointers name and whose fd table its fds are numbers in, and the way to
// answer it, now or later from another thread.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>

#include "abi/l4t/nodes.h"

namespace nvsentry::hostshim::fake_l4t {

// One piece of a scatter/gather copy between the caller's memory and the fake's.
struct CallerPiece {
  uint64_t caller_addr;
  uint8_t* local;
  size_t len;
};

class L4tCaller {
 public:
  virtual ~L4tCaller() = default;
  virtual pid_t tid() const = 0;
  // Copies between the caller's memory at `addr` and ours; false when any byte of the range is
  // not the caller's to read (write): the call then answers EFAULT.
  virtual bool Read(uint64_t addr, std::span<uint8_t> dst) = 0;
  virtual bool Write(uint64_t addr, std::span<const uint8_t> src) = 0;
  // The same for many pieces at once (nvmap READ and WRITE): into our memory when !to_caller.
  virtual bool Transfer(std::span<const CallerPiece> pieces, bool to_caller) = 0;
  // The fake's session behind the caller's fd `fd` (a file of the fake's own mount), or 0.
  virtual uint64_t SessionOf(int32_t fd) = 0;

  // What a call that returns a new fd needs (L4T-NODE-7); a caller that cannot take fds (FUSE's
  // restricted ioctls: the server cannot place one) answers -EOPNOTSUPP and the call ENOTTY.
  // A new open of `node` by the fake itself (a session made as the caller's own open would make
  // it): the fake's fd of it, and the session in `*session`; or -errno.
  virtual int OpenNode(abi::l4t::L4tNode node, uint64_t* session) {
    (void)node;
    (void)session;
    return -EOPNOTSUPP;
  }
  // Installs a copy of the fake's `fd` in the caller's fd table (close-on-exec when `cloexec`):
  // the caller's number, or -errno. The fake keeps its own fd.
  virtual int PlaceFd(int fd, bool cloexec) {
    (void)fd;
    (void)cloexec;
    return -EOPNOTSUPP;
  }
  // A new eventfd of the caller's (a sync-file-like fence fd: readable once the fake writes to
  // it): the fake's copy, which PlaceFd then hands out (its number), or -errno.
  virtual int MakeEventFd() { return -EOPNOTSUPP; }
  // nvmap's handle fds (L4T-MAP-1): a new open of the handle file (an unlisted file beside the
  // nodes; a session the fake then binds to an object), as OpenNode; PlaceFd hands it out.
  virtual int OpenHandleFile(uint64_t* session) {
    (void)session;
    return -EOPNOTSUPP;
  }
  // A new number in the caller for the open file behind its `fd` (a dup, close-on-exec when
  // `cloexec`): the fake's copy, which PlaceFd then hands out, or -errno.
  virtual int DupFd(int32_t fd, bool cloexec) {
    (void)fd;
    (void)cloexec;
    return -EOPNOTSUPP;
  }
  // Closes the caller's `fd` (nvmap FREE): close's answer, 0 or -errno.
  virtual int CloseFd(int32_t fd) {
    (void)fd;
    return -EOPNOTSUPP;
  }
  // A TSG event's fd (L4T-TSG-14): a new open of the event file, as OpenNode.
  virtual int OpenEventFile(uint64_t* session) {
    (void)session;
    return -EOPNOTSUPP;
  }
  // Whether `fd` is an open fd of the caller's (dma_buf_get's EBADF when not).
  virtual bool IsOpenFd(int32_t fd) { return fd >= 0 && SessionOf(fd) != 0; }
};

// Answers one request exactly once. Send after an earlier Send (or after the request was
// interrupted and answered EINTR) does nothing.
class L4tReply {
 public:
  virtual ~L4tReply() = default;
  // err 0: success with `out` (at most the request's out_size bytes); otherwise an errno.
  virtual void Send(int err, std::span<const uint8_t> out) = 0;
  // True once the request was answered without us (interrupted): a parked call forgets it.
  virtual bool Abandoned() = 0;
  // For calls that may park: called before the call can be completed elsewhere, so that an
  // interrupt that arrives from then on answers EINTR.
  virtual void AllowInterrupt() {}
};

struct L4tRequest {
  uint32_t code;
  std::span<const uint8_t> in;  // the argument's bytes the kernel copied in (may be empty)
  uint64_t arg;                 // the raw third argument: the argument's address, or a value
  size_t out_size;              // the bytes the kernel copies back on success
  L4tCaller& caller;
};

}  // namespace nvsentry::hostshim::fake_l4t
