// The simulated Jetson (hostshim/fake_l4t/fake_jetson.h) behind this process's own open, close,
// dup3 and ioctl, without FUSE or another process: a path under kInProcessDevDir opens a session
// of the fake (the fd is a real one, an eventfd, so its number is the process's), an ioctl on such
// an fd is served by the fake as the kernel would hand it over (the code's size copied in for
// _IOW, copied back for _IOR on success; _IO codes pass the value), and its last close releases
// the session. Everything else goes to the C library untouched. For xlate_fuzz, which points the
// host backend's HostDriver at kInProcessDevDir.
//
// An observer sees every open, close, dup3 and ioctl of the fake's fds, before and after the
// fake serves it (xlate_rules.h checks them against docs/host-abi.md's rules). Only one
// InProcessL4t may exist at a time.
#pragma once

#include <cstdint>
#include <span>

#include "abi/l4t/nodes.h"
#include "hostshim/fake_l4t/fake_jetson.h"

namespace nvsentry::fuzz {

inline constexpr char kInProcessDevDir[] = "/nvsentry-in-process-l4t";

class L4tObserver {
 public:
  virtual ~L4tObserver() = default;
  virtual void Opened(int fd, abi::l4t::L4tNode node) = 0;
  // `fd` no longer names the session it named (closed, or replaced by dup3).
  virtual void Closed(int fd) = 0;
  // dup3(from, to): `to` now names the session `from` names (Closed(to) came first if needed).
  virtual void Duplicated(int from, int to, abi::l4t::L4tNode node) = 0;
  // `arg`: the argument's bytes at the caller's address (empty for _IO codes: then `value`).
  virtual void Before(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<const uint8_t> arg,
                      uint64_t value) = 0;
  // After the answer (`err` 0 or an errno) was copied back: `arg` as the caller now sees it.
  virtual void After(int fd, abi::l4t::L4tNode node, uint32_t code, std::span<const uint8_t> arg,
                     uint64_t value, int err) = 0;
  // An L4T code on an fd number this process no longer holds as the fake's.
  virtual void StaleFd(int fd, uint32_t code) = 0;
};

class InProcessL4t {
 public:
  // `observer` outlives this.
  InProcessL4t(hostshim::fake_l4t::FakeJetson& fake, L4tObserver& observer);
  ~InProcessL4t();  // closes what is still open (the caller checks open_fds() first)
  InProcessL4t(const InProcessL4t&) = delete;
  InProcessL4t& operator=(const InProcessL4t&) = delete;

  // The fake's fds open now, over every node.
  size_t open_fds() const;
};

}  // namespace nvsentry::fuzz
