// /dev/nvhost-gpu of the fake Jetson: L4T channel calls as the sim's GpuChannel calls, with
// r32.7.4's own answers where they differ (docs/host-abi.md, Rules: L4T-CH-n). Opening the node
// made the channel, which serves nothing until a TSG's BIND_CHANNEL (serve_tsg.cc; L4T-TSG-1..5).
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "abi/devices/channel.h"
#include "abi/l4t/nvgpu_channel.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace gch = abi::channel;
namespace hch = abi::l4t::nvgpu_channel;
using abi::NvError;
constexpr abi::DeviceId kGpu = abi::DeviceId::kNvhostGpu;
constexpr uint32_t kMaxRingEntries = 1u << 16;  // the sim's

int ErrnoOnly(NvError err, std::span<const uint8_t>, std::span<uint8_t>) { return ErrnoOf(err); }

bool InTsg(Session& s) {
  absl::MutexLock l(&s.mu);
  return s.tsg != nullptr;
}

// r32.7.4's timed-out mark (L4T-CH-4): a channel in no TSG (L4T-TSG-1), one its TSG's
// FORCE_RESET or UNBIND_CHANNEL ended (L4T-TSG-11, -12), or one whose sim channel has failed (a
// fault, a timeout).
bool TimedOut(Session& s) {
  {
    absl::MutexLock l(&s.mu);
    if (s.tsg == nullptr || s.dead) return true;
  }
  bool failed = false;
  SelfCaller caller;
  GuestCallSpec g{kGpu, gch::kGetErrorNotification, Bytes(gch::ErrorNotification{})};
  RunGuestCall(*s.backend, std::move(g), caller, [&](NvError err, std::span<uint8_t> arg) {
    failed = err == NvError::kSuccess &&
             reinterpret_cast<const gch::ErrorNotification*>(arg.data())->status != 0;
  });
  return failed;
}

void SetNvmapFd(L4tCall& c) {
  // r32.7.4 ignores the fd; the fake holds it to be an nvmap open of its own, so that a
  // translation that passes the wrong fd is caught.
  const auto fd = static_cast<int32_t>(c.As<hch::U32Arg>().value);
  std::shared_ptr<Session> map = SessionOfFd(c, fd, abi::l4t::L4tNode::kNvmap);
  if (map == nullptr) return c.Answer(EINVAL);
  SelfCaller caller;
  caller.Name(fd, map->backend);
  ForwardSpec f{kGpu, gch::kSetNvmapFd, Bytes(gch::U32Arg{static_cast<uint32_t>(fd)})};
  f.caller = &caller;
  f.back = ErrnoOnly;
  Forward(c, std::move(f));
}

// ALLOC_GPFIFO(_EX): _EX's entries a power of two first, then an address space, then a TSG
// (L4T-TSG-2), then no ring yet (L4T-CH-5); the plain form's ring has three times the entries
// (L4T-CH-6), which the sim gets.
void AllocGpfifo(L4tCall& c, bool ex) {
  const uint32_t n =
      ex ? c.As<hch::AllocGpfifoEx>().num_entries : c.As<hch::AllocGpfifo>().num_entries;
  if (ex && !std::has_single_bit(n)) return c.Answer(EINVAL);
  const uint64_t ring = ex ? n : uint64_t{3} * n;
  Session& s = c.session;
  {
    absl::MutexLock l(&s.mu);
    if (!s.as_bound || s.tsg == nullptr) return c.Answer(EINVAL);
    if (s.ring_entries != 0) return c.Answer(EEXIST);
  }
  if (ring == 0 || ring > kMaxRingEntries) return c.Answer(ENOMEM);  // the sim's bound
  // The guest's ALLOC_GPFIFO_EX has a fence where the host's has reserved words: not passed.
  hch::AllocGpfifoEx g{};
  g.num_entries = static_cast<uint32_t>(ring);
  ForwardSpec f{kGpu, ex ? gch::kAllocGpfifoEx : gch::kAllocGpfifo,
                ex ? Bytes(g) : Bytes(gch::AllocGpfifo{g.num_entries, 0})};
  f.back = [&s, ring](NvError err, std::span<const uint8_t>, std::span<uint8_t>) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    absl::MutexLock l(&s.mu);
    s.ring_entries = static_cast<uint32_t>(ring);
    return 0;
  };
  Forward(c, std::move(f));
}

// SUBMIT_GPFIFO's checks in r32.7.4's order (L4T-CH-9): a channel marked timed out, a ring, room
// for the entries and the two the kernel adds in one less than the ring, an address space.
int CheckSubmit(L4tCall& c, uint32_t num_entries) {
  Session& s = c.session;
  if (TimedOut(s)) return ETIMEDOUT;
  absl::MutexLock l(&s.mu);
  if (s.ring_entries == 0) return ENOMEM;
  if (uint64_t{num_entries} + 2 > s.ring_entries - 1) return ENOMEM;
  if (!s.as_bound) return EINVAL;
  return 0;
}

// The fence of a submission as a fence fd (L4T-CH-10's SYNC_FENCE): an eventfd of the caller's
// that the fake makes readable when the syncpoint reaches the value.
class FenceFdWaiter : public sim::SyncpointWaiter {
 public:
  explicit FenceFdWaiter(UniqueFd fd) : fd_(std::move(fd)) {}
  void Reached(uint32_t) override { Signal(fd_.get()); }
  void TimedOut() override {}
  bool Abandoned() override { return false; }
  static void Signal(int fd) {
    const uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
  }

 private:
  UniqueFd fd_;
};

// The caller's fence fd for {id, value}: its number, or -errno.
int FenceFd(L4tCall& c, UniqueFd copy, uint32_t id, uint32_t value) {
  const int placed = c.req.caller.PlaceFd(copy.get(), true);
  if (placed < 0) return placed;
  uint32_t now = 0;
  auto waiter = std::make_shared<FenceFdWaiter>(UniqueFd(dup(copy.get())));
  if (c.state.gpu.syncpoints().Wait(
          id, value, -1, [&] { return waiter; }, &now) == sim::Syncpoints::WaitStart::kReached)
    FenceFdWaiter::Signal(copy.get());
  return placed;
}

void Submit(L4tCall& c) {
  const auto a = c.As<hch::SubmitGpfifo>();
  if (int e = CheckSubmit(c, a.num_entries); e != 0) return c.Answer(e);
  if (a.num_entries > gch::kMaxGpfifoEntries) return c.Answer(EINVAL);
  gch::SubmitGpfifoHeader h{};
  // FENCE_GET with SYNC_FENCE: the fence as an fd, where the caller can take one (L4T-CH-10).
  constexpr uint32_t kSyncFence = 1u << 3, kFenceWait = 1u << 0;
  const bool sync_fence =
      (a.flags & kSyncFence) && (a.flags & gch::kFenceGet) && !(a.flags & kFenceWait);
  std::shared_ptr<UniqueFd> fence_copy;
  if (sync_fence) {
    const int copy = c.req.caller.MakeEventFd();
    if (copy >= 0) fence_copy = std::make_shared<UniqueFd>(copy);
  }
  if (int e = SubmitFlagsToGuest(fence_copy ? a.flags & ~kSyncFence : a.flags, &h.flags); e != 0)
    return c.Answer(e);
  h.num_entries = a.num_entries;
  h.fence = {a.fence.id, a.fence.value};
  std::vector<uint8_t> arg(sizeof h + size_t{a.num_entries} * sizeof(hch::GpfifoEntry));
  std::memcpy(arg.data(), &h, sizeof h);
  // The entries, at the caller's `gpfifo`: the same two words as the guest's.
  if (a.num_entries > 0 && !c.req.caller.Read(a.gpfifo, std::span<uint8_t>(arg).subspan(sizeof h)))
    return c.Answer(EFAULT);
  // The code's 14 size bits cannot hold a large submission; the sim reads the array's own size.
  const uint32_t size_bits = static_cast<uint32_t>(std::min<size_t>(arg.size(), 0x3FFF)) << 16;
  ForwardSpec f{kGpu, gch::kSubmitGpfifo | size_bits, std::move(arg)};
  f.array_offset = sizeof h;
  f.back = [&c, fence_copy](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& gh = *reinterpret_cast<const gch::SubmitGpfifoHeader*>(guest.data());
    auto& hh = *reinterpret_cast<hch::SubmitGpfifo*>(l4t.data());
    if (hh.flags & gch::kFenceGet) hh.fence = {gh.fence.id, gh.fence.value};
    if (fence_copy) {
      const int fd = FenceFd(c, std::move(*fence_copy), gh.fence.id, gh.fence.value);
      if (fd < 0) return -fd;
      hh.fence.id = static_cast<uint32_t>(fd);
    }
    return 0;
  };
  Forward(c, std::move(f));
}

// ALLOC_OBJ_CTX (L4T-CH-8): an address space, a class GM20B takes, a TSG (L4T-TSG-3); the context
// is the TSG's, so a later call succeeds without a new one; `obj_id` comes back as passed.
void AllocObjCtx(L4tCall& c) {
  const auto a = c.As<hch::AllocObjCtx>();
  Session& s = c.session;
  {
    absl::MutexLock l(&s.mu);
    if (!s.as_bound) return c.Answer(EINVAL);
  }
  switch (a.class_num) {
    case 0xB197:
    case 0xB1C0:
    case 0x902D:
    case 0xA0B5:
    case 0xB0B5: break;
    default: return c.Answer(EINVAL);
  }
  {
    absl::MutexLock l(&s.mu);
    if (s.tsg == nullptr) return c.Answer(EINVAL);
    if (s.obj_ctx) return c.Answer(0);
  }
  ForwardSpec f{kGpu, gch::kAllocObjCtx, c.arg};
  f.back = [&s](NvError err, std::span<const uint8_t>, std::span<uint8_t>) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    absl::MutexLock l(&s.mu);
    s.obj_ctx = true;
    return 0;
  };
  Forward(c, std::move(f));
}

void SetTimeoutEx(L4tCall& c) {
  // The sim keeps one timeout; the flags (no debug dump) change nothing there.
  ForwardSpec f{kGpu, gch::kSetTimeout, Bytes(gch::U32Arg{c.As<hch::SetTimeoutEx>().timeout})};
  f.back = ErrnoOnly;
  Forward(c, std::move(f));
}

// SET_ERROR_NOTIFIER (L4T-CH-12): `mem` 0 is refused; a number that is no buffer drops the
// current notifier, then is refused; the rest is the sim's (16 bytes inside, cleared).
void SetErrorNotifier(L4tCall& c) {
  auto a = c.As<hch::SetErrorNotifier>();
  if (a.mem == 0) return c.Answer(EINVAL);
  uint32_t id = 0;
  if (ObjectOfDmabuf(c, a.mem, &id) != 0) {
    SelfCaller caller;
    GuestCallSpec g{kGpu, gch::kSetErrorNotifier, Bytes(hch::SetErrorNotifier{})};
    RunGuestCall(*c.session.backend, std::move(g), caller, [](NvError, std::span<uint8_t>) {});
    return c.Answer(EINVAL);
  }
  a.mem = id;  // the sim's name for it; the argument goes back as passed
  ForwardSpec f{kGpu, gch::kSetErrorNotifier, Bytes(a)};
  f.back = ErrnoOnly;
  Forward(c, std::move(f));
}

// WAIT (L4T-CH-11): a channel marked timed out answers ETIMEDOUT; `timeout` 0 is no timeout; a
// notifier wait that times out answers EINTR, a semaphore wait ETIMEDOUT. dmabuf_fd is a handle
// fd (or, over FUSE alone, an nvmap id), the sim's id in the guest call; a wait parks.
void Wait(L4tCall& c) {
  if (TimedOut(c.session)) return c.Answer(ETIMEDOUT);
  auto a = c.As<hch::Wait>();
  const bool notifier = a.type == 0;
  if (c.state.handles_are_fds && (a.type == 0 || a.type == 1)) {
    if (ObjectOfDmabuf(c, a.dmabuf_fd, &a.dmabuf_fd) != 0) return c.Answer(EINVAL);
  }
  if (a.timeout == 0) a.timeout = 0xFFFFFFFFu;  // the sim's "no timeout"
  ForwardSpec f{kGpu, gch::kWait, Bytes(a)};
  f.may_park = true;
  f.back = [notifier](NvError err, std::span<const uint8_t>, std::span<uint8_t>) {
    if (err == NvError::kTimeout && notifier) return EINTR;
    return ErrnoOf(err);
  };
  Forward(c, std::move(f));
}

// ZCULL_BIND (L4T-CH-13): a TSG (L4T-TSG-5), then mode 2 (a separate buffer) needs an address;
// r32.7.4 checks no other mode, so the modes the sim does not know (above 3) are taken and change
// nothing.
void ZcullBind(L4tCall& c) {
  const auto a = c.As<hch::ZcullBind>();
  if (!InTsg(c.session)) return c.Answer(EINVAL);
  if (a.mode == 2 && a.gpu_va == 0) return c.Answer(EINVAL);
  if (a.mode > 3) return c.Answer(0);
  ForwardSame(c, kGpu, gch::kZcullBind);
}

// FORCE_RESET (L4T-TSG-11): every channel of the TSG is timed out for good; without a TSG,
// nothing. (The sim's channels are left as they are: the fake refuses their work.)
void ForceReset(L4tCall& c) {
  std::shared_ptr<Tsg> tsg;
  {
    absl::MutexLock l(&c.session.mu);
    tsg = c.session.tsg;
  }
  if (tsg != nullptr) {
    for (const std::shared_ptr<Session>& ch : tsg->Channels()) {
      absl::MutexLock l(&ch->mu);
      ch->dead = true;
    }
  }
  c.Answer(0);
}

}  // namespace

void ServeChannel(L4tCall& c) {
  switch (c.desc.code) {
    case hch::kSetNvmapFd: return SetNvmapFd(c);
    case hch::kSetTimeout: return ForwardSame(c, kGpu, gch::kSetTimeout);
    case hch::kSetTimeoutEx: return SetTimeoutEx(c);
    case hch::kGetTimedout:  // L4T-CH-4
      c.As<hch::U32Arg>().value = TimedOut(c.session) ? 1 : 0;
      return c.Answer(0);
    case hch::kAllocGpfifo: return AllocGpfifo(c, false);
    case hch::kAllocGpfifoEx: return AllocGpfifo(c, true);
    case hch::kWait: return Wait(c);
    case hch::kSubmitGpfifo: return Submit(c);
    case hch::kAllocObjCtx: return AllocObjCtx(c);
    case hch::kZcullBind: return ZcullBind(c);
    case hch::kSetErrorNotifier: return SetErrorNotifier(c);
    case hch::kEnable: return ForwardSame(c, kGpu, gch::kEnable);
    case hch::kDisable: return ForwardSame(c, kGpu, gch::kDisable);
    case hch::kPreempt: return ForwardSame(c, kGpu, gch::kPreempt);
    case hch::kForceReset: return ForceReset(c);
    // EVENT_ID_CTRL and SET_TIMESLICE: r32.7.4's channel does not dispatch them (ENOTTY);
    // OPEN returns a new fd, which a FUSE server cannot place in its caller.
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
