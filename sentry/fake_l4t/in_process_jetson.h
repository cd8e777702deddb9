// The fake Jetson (hostshim/fake_l4t/fake_jetson.h) served inside this process as the host
// backend's host (hostshim/host/host_port.h): `nvsentry run --backend=host --simulated-jetson`.
// The backend's opens of the nodes and its ioctls reach the fake as the kernel would pass them
// (the argument's _IOC_SIZE bytes in for _IOC_WRITE codes and back out for _IOC_READ ones), and
// every call that returns an fd on r32.7.4 returns one: nvmap handles are dma-buf-like fds,
// ALLOC_AS, OPEN_TSG and OPEN_CHANNEL new opens, fence fds eventfds. What differs from
// `nvsentry fake-l4t`: no FUSE and no root; a call costs a function call and a getsockopt, not a
// round trip to another process (so the backend's own cost shows, docs/benchmarks.md); user
// pointers are the backend's own buffers, read and written in place
// (hostshim/fake_l4t/self_caller.h); the fds it returns are all close-on-exec; the fake's memory
// is the sentry's; TSG event fds never poll readable.
//
// Each open is one end of a socket pair (known by its SO_COOKIE): the fd the backend holds and
// dups, closed as any fd.
// The fake keeps the other end and releases the open once every copy of the backend's end is
// closed (a driver's release at the last close), from a thread of its own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/fake_l4t/fake_jetson.h"
#include "hostshim/host/host_port.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {

class InProcessJetson : public hostshim::host::HostPort {
 public:
  // The directory name the backend opens the nodes under (no such directory exists).
  static constexpr std::string_view kDir = "/nvsentry-simulated-jetson";

  // A Jetson that answers as r32.7.4 does (64 KiB default big pages, nvmap handles as fds).
  InProcessJetson();
  ~InProcessJetson() override;
  InProcessJetson(const InProcessJetson&) = delete;
  InProcessJetson& operator=(const InProcessJetson&) = delete;

  int Open(std::string_view name) override;
  std::optional<int> Ioctl(int fd, uint32_t code, unsigned long arg) override;

  // The open behind `fd` (any copy of an fd Open or an fd-returning call made), or 0.
  uint64_t SessionOf(int fd);
  // A new open: `session` (of the fake's, > 0) behind a new fd of ours, or -errno. The fake
  // releases the session once every copy of the fd is closed.
  int Adopt(int64_t session);
  hostshim::fake_l4t::FakeJetson& fake() { return fake_; }
  // Opens not yet released (tests).
  size_t opens() const;

 private:
  void ReleaseLoop();

  hostshim::fake_l4t::FakeJetson fake_;
  hostshim::UniqueFd epoll_, stop_;
  mutable absl::Mutex mu_;
  // By the socket cookie of the backend's end: the session and the fake's end.
  struct Open_ {
    uint64_t session;
    hostshim::UniqueFd kept;
  };
  absl::flat_hash_map<uint64_t, Open_> opens_ ABSL_GUARDED_BY(mu_);
  std::thread releaser_;
};

// The port of `nvsentry run --simulated-jetson`: one InProcessJetson for the process, made at the
// first open (its threads start then, not before the launcher's namespaces are made) and never
// destroyed (the sentry's threads may call it until the process ends).
hostshim::host::HostPort& SimulatedJetsonPort();

}  // namespace nvsentry::sentry
