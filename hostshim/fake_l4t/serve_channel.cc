// /dev/nvhost-gpu of the fake Jetson: L4T channel calls as the sim's GpuChannel calls. Opening the
// node made the channel.
#include <cerrno>
#include <cstring>

#include "abi/devices/channel.h"
#include "abi/l4t/nvgpu_channel.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace gch = abi::channel;
namespace hch = abi::l4t::nvgpu_channel;
using abi::NvError;
constexpr abi::DeviceId kGpu = abi::DeviceId::kNvhostGpu;

int ErrnoOnly(NvError err, std::span<const uint8_t>, std::span<uint8_t>) { return ErrnoOf(err); }

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

void AllocGpfifoEx(L4tCall& c) {
  const auto a = c.As<hch::AllocGpfifoEx>();
  // The guest's reserved words carry its fence out; the host's are reserved: not passed.
  hch::AllocGpfifoEx g{};
  g.num_entries = a.num_entries;
  g.num_inflight_jobs = a.num_inflight_jobs;
  g.flags = a.flags;
  ForwardSpec f{kGpu, gch::kAllocGpfifoEx, Bytes(g)};
  f.back = ErrnoOnly;
  Forward(c, std::move(f));
}

void Submit(L4tCall& c) {
  const auto a = c.As<hch::SubmitGpfifo>();
  if (a.num_entries > gch::kMaxGpfifoEntries) return c.Answer(EINVAL);
  gch::SubmitGpfifoHeader h{};
  if (int e = SubmitFlagsToGuest(a.flags, &h.flags); e != 0) return c.Answer(e);
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
  f.back = [](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& gh = *reinterpret_cast<const gch::SubmitGpfifoHeader*>(guest.data());
    auto& hh = *reinterpret_cast<hch::SubmitGpfifo*>(l4t.data());
    if (hh.flags & gch::kFenceGet) hh.fence = {gh.fence.id, gh.fence.value};
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

void Wait(L4tCall& c) {
  // dmabuf_fd is an nvmap id here; a wait parks.
  ForwardSpec f{kGpu, gch::kWait, c.arg};
  f.may_park = true;
  f.back = [](NvError err, std::span<const uint8_t>, std::span<uint8_t>) { return ErrnoOf(err); };
  Forward(c, std::move(f));
}

}  // namespace

void ServeChannel(L4tCall& c) {
  switch (c.desc.code) {
    case hch::kSetNvmapFd: return SetNvmapFd(c);
    case hch::kSetTimeout: return ForwardSame(c, kGpu, gch::kSetTimeout);
    case hch::kSetTimeoutEx: return SetTimeoutEx(c);
    case hch::kAllocGpfifo: return ForwardSame(c, kGpu, gch::kAllocGpfifo);
    case hch::kAllocGpfifoEx: return AllocGpfifoEx(c);
    case hch::kWait: return Wait(c);
    case hch::kSubmitGpfifo: return Submit(c);
    case hch::kAllocObjCtx: return ForwardSame(c, kGpu, gch::kAllocObjCtx);
    case hch::kZcullBind: return ForwardSame(c, kGpu, gch::kZcullBind);
    case hch::kSetErrorNotifier: return ForwardSame(c, kGpu, gch::kSetErrorNotifier);
    case hch::kEnable: return ForwardSame(c, kGpu, gch::kEnable);
    case hch::kDisable: return ForwardSame(c, kGpu, gch::kDisable);
    case hch::kPreempt: return ForwardSame(c, kGpu, gch::kPreempt);
    case hch::kForceReset: return ForwardSame(c, kGpu, gch::kForceReset);
    // EVENT_ID_CTRL and SET_TIMESLICE: r32.7.4's channel does not dispatch them (ENOTTY);
    // OPEN returns a new fd, which a FUSE server cannot place in its caller.
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
