// The simulated GM20B as a Linux for Tegra r32.7 host would show it: sessions of six L4T nodes
// (/dev/nvhost-ctrl, -ctrl-gpu, -as-gpu, -gpu, -tsg-gpu, /dev/nvmap) that take L4T calls (abi/l4t:
// codes, layouts, user pointers) and serve each with the simulator's own device backends
// (hostshim/sim) through the guest ABI, then answer in the L4T layout with an errno. TSGs are the
// fake's own (the sim has none): a channel serves nothing until bound to one, as on r32.7.4. What
// makes it reachable by real ioctl(2) calls is `nvsentry fake-l4t` (sentry/fake_l4t/fake_l4t_fs.h);
// this is the part without a kernel interface, so it is unit-tested with an in-memory caller.
//
// Semantics (docs/host-passthrough.md, "The simulated Jetson"): opening nvhost-as-gpu makes an
// address space with the default big page size (the constructor's), opening nvhost-gpu a channel
// (unusable until a TSG's BIND_CHANNEL), opening nvhost-tsg-gpu a TSG; nvmap handles are the sim's
// object ids, counted per open and freed when the open closes, or (handles_are_fds) dma-buf fds
// as on r32.7.4; objects are backed by this process's memory. ALLOC_AS, OPEN_TSG and OPEN_CHANNEL
// return a new fd through L4tCaller::OpenNode and PlaceFd, nvmap's handle fds through
// OpenHandleFile and DupFd, TSG event fds through OpenEventFile, fence fds through MakeEventFd
// (ENOTTY where the caller cannot take one); the other calls that return fds (POLL_FD_CREATE,
// SYNC_FENCE_CREATE, GET_EVENT_FD, FROM_VA) and the rest the fake does not serve answer ENOTTY with
// a log line; unknown codes as r32.7.4 answers them (L4T-NODE-2: EINVAL outside an nvgpu node's
// limits, else ENOTTY); a short argument EINVAL; a bad user pointer EFAULT. Where the sim's answers
// differ from r32.7.4's, the fake answers r32.7.4's (docs/host-abi.md, Rules).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "abi/l4t/nodes.h"
#include "hostshim/fake_l4t/request.h"

namespace nvsentry::hostshim::fake_l4t {

// The handle file beside the nodes (unlisted): each nvmap handle fd is an open of it; and the event
// file, each TSG event fd (EVENT_ID_CTRL) an open of it.
inline constexpr std::string_view kHandleFileName = ".nvmap-dmabuf";
inline constexpr std::string_view kEventFileName = ".nvgpu-event";

struct FakeState;

class FakeJetson {
 public:
  // `default_big_page_size`: the big pages of an address space made by opening nvhost-as-gpu, and
  // GET_CHARACTERISTICS' big_page_size: GM20B's 64 KiB (L4T-AS-1), or 128 KiB (the sim's) for
  // clients that cannot get 128 KiB otherwise (ALLOC_AS returns an fd; over FUSE alone it cannot).
  // `handles_are_fds`: nvmap handles are dma-buf fds as on r32.7.4 (CREATE, GET_FD and FROM_FD
  // hand out an open of the handle file, FREE closes: L4T-MAP-1..3, -7), for callers that take
  // fds (L4tCaller::OpenHandleFile); otherwise they are the sim's ids, counted per nvmap open.
  explicit FakeJetson(uint32_t default_big_page_size = 0x10000, bool handles_are_fds = false);
  ~FakeJetson();
  FakeJetson(const FakeJetson&) = delete;
  FakeJetson& operator=(const FakeJetson&) = delete;

  // A new open of `node` (one of the six): the session's handle (> 0), or -errno (ENODEV for
  // another node; the sim's refusal, e.g. ENOMEM when no syncpoint is left for a channel).
  int64_t Open(abi::l4t::L4tNode node);
  // A new open of the handle file (kHandleFileName): a session naming no object until the call
  // that opened it binds one (an nvmap handle fd); the nodes' calls on it answer ENOTTY.
  int64_t OpenHandleFile();
  // A new open of the event file: an event of no TSG until EVENT_ID_CTRL enables it; the nodes'
  // calls on it answer ENOTTY.
  int64_t OpenEventFile();
  // A poll of open `handle`: for an event file POLLIN | POLLPRI once its event is posted (which
  // clears it), else 0 and `waker` is called at the next post; any other open is always ready
  // (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM, as a file without poll).
  unsigned Poll(uint64_t handle, std::function<void()> waker);
  // The open `handle` is gone: what it made goes (an nvmap open's handles, a channel, an address
  // space once nothing uses it).
  void Release(uint64_t handle);
  // Serves one ioctl on session `handle`; `reply` is answered exactly once, now or (a wait) from
  // the thread that completes it.
  void Ioctl(uint64_t handle, const L4tRequest& req, std::shared_ptr<L4tReply> reply);

  // One line: open sessions per node, nvmap objects and the fake's memory behind them, parked
  // calls, and the sim's own status.
  std::string Status() const;
  size_t session_count() const;
  // No session open, no nvmap object, none of the fake's memory, no parked call (what the sim
  // frees may go after the last session closes).
  bool HoldsNothing() const;

 private:
  std::unique_ptr<FakeState> state_;
};

}  // namespace nvsentry::hostshim::fake_l4t
