// /dev/nvhost-as-gpu of the fake Jetson: L4T calls as the sim's AsDevice calls, with r32.7.4's
// own answers where they differ (docs/host-abi.md, Rules: L4T-AS-n). Opening the node made the
// address space (fake_jetson.cc: ALLOC_AS with the sim's default big page size).
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/l4t/nvgpu_as.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace ga = abi::nvhost_as_gpu;
namespace ha = abi::l4t::nvgpu_as;
using abi::NvError;
constexpr abi::DeviceId kAs = abi::DeviceId::kNvhostAsGpu;

void BindChannel(L4tCall& c) {
  const auto fd = static_cast<int32_t>(c.As<ha::BindChannel>().channel_fd);
  std::shared_ptr<Session> ch = SessionOfFd(c, fd, abi::l4t::L4tNode::kNvhostGpu);
  if (ch == nullptr) return c.Answer(EINVAL);
  {
    // A channel takes one address space, once: a second BIND_CHANNEL is refused (L4T-AS-3).
    absl::MutexLock l(&ch->mu);
    if (ch->as_bound) return c.Answer(EINVAL);
  }
  SelfCaller caller;
  caller.Name(fd, ch->backend);
  ForwardSpec f{kAs, ga::kBindChannel, Bytes(ga::BindChannel{static_cast<uint32_t>(fd)})};
  f.caller = &caller;
  f.back = [ch](NvError err, std::span<const uint8_t>, std::span<uint8_t>) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    absl::MutexLock l(&ch->mu);
    ch->as_bound = true;
    return 0;
  };
  Forward(c, std::move(f));
}

// MAP_BUFFER_EX's checks before any mapping is made, in r32.7.4's order: direct kind control
// (L4T-AS-6), the handle, an anywhere map of the whole buffer only (L4T-AS-8), the range
// (L4T-AS-9). `page_size` is not looked at (L4T-AS-10).
int CheckMap(L4tCall& c, const ha::MapBufferEx& a, uint32_t* id) {
  if (!(a.flags & ha::kMapDirectKindCtrl)) return EINVAL;
  if (const int e = ObjectOfDmabuf(c, a.dmabuf_fd, id); e != 0) return e;  // L4T-AS-7
  std::shared_ptr<sim::NvmapObject> obj = c.state.gpu.nvmap().Resolve(getpid(), *id);
  if (obj == nullptr) return EINVAL;
  if (!(a.flags & ha::kMapFixedOffset) && (a.buffer_offset || a.offset || a.mapping_size))
    return EINVAL;
  const uint64_t size = (obj->size() + 0xFFF) & ~uint64_t{0xFFF};  // the dma-buf's: whole pages
  if (a.mapping_size > size || a.buffer_offset > size - a.mapping_size) return EINVAL;
  return 0;
}

void MapBufferEx(L4tCall& c) {
  const auto a = c.As<ha::MapBufferEx>();
  uint32_t id = 0;  // the sim's object (the fake's key: one buffer, whichever fd names it)
  if (int e = CheckMap(c, a, &id); e != 0) return c.Answer(e);
  ga::MapBufferEx g{};
  int32_t kind = 0;
  if (int e = MapBufferExToGuest(a.flags, a.compr_kind, a.incompr_kind, &g.flags, &kind); e != 0)
    return c.Answer(e);
  const bool fixed = a.flags & ha::kMapFixedOffset;
  const MapKey key{id, a.compr_kind != ha::kKindInvalid ? a.compr_kind : a.incompr_kind,
                   a.flags & kMappingFlags, fixed ? a.offset : 0};
  Session& s = c.session;
  {
    // The same buffer mapped again alike: the same mapping, one more reference (L4T-AS-13).
    absl::MutexLock l(&s.mu);
    if (std::optional<uint64_t> va = s.as.Reuse(key)) {
      c.As<ha::MapBufferEx>().offset = *va;
      return c.Answer(0);
    }
  }
  g.kind = static_cast<uint32_t>(kind);
  g.mem_id = id;
  g.buffer_offset = a.buffer_offset;
  g.mapping_size = a.mapping_size;
  g.offset_or_align = a.offset;
  ForwardSpec f{kAs, ga::kMapBufferEx, Bytes(g)};
  f.back = [&s, key](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const uint64_t va = reinterpret_cast<const ga::MapBufferEx*>(guest.data())->offset_or_align;
    reinterpret_cast<ha::MapBufferEx*>(l4t.data())->offset = va;
    absl::MutexLock l(&s.mu);
    s.as.AddMapping(key, va);
    return 0;
  };
  Forward(c, std::move(f));
}

// UNMAP_BUFFER answers 0 whatever happens; the sim unmaps with the last reference (L4T-AS-15).
void UnmapBuffer(L4tCall& c) {
  const uint64_t va = c.As<ha::UnmapBuffer>().offset;
  AsRecords::Drop d;
  {
    absl::MutexLock l(&c.session.mu);
    d = c.session.as.DropMapping(va);
  }
  if (d != AsRecords::Drop::kLast) return c.Answer(0);
  ForwardSpec f{kAs, ga::kUnmapBuffer, Bytes(ga::UnmapBuffer{va})};
  f.back = [](NvError, std::span<const uint8_t>, std::span<uint8_t>) { return 0; };
  Forward(c, std::move(f));
}

// ALLOC_SPACE (both codes: NVGPU32's is the guest's very code, the LP64 one has the same layout).
void AllocSpace(L4tCall& c) {
  Session& s = c.session;
  const auto a = c.As<ha::AllocSpace>();
  ForwardSpec f{kAs, ga::kAllocSpace, c.arg};
  f.back = [&s, a](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const uint64_t offset = reinterpret_cast<const ga::AllocSpace*>(guest.data())->offset_or_align;
    reinterpret_cast<ha::AllocSpace*>(l4t.data())->offset_or_align = offset;
    absl::MutexLock l(&s.mu);
    s.as.AddReservation({offset, a.pages, a.page_size});
    return 0;
  };
  Forward(c, std::move(f));
}

// FREE_SPACE frees the reservation holding `offset` (only `offset` is read), with the mappings in
// it, and answers 0 when none holds it (L4T-AS-5).
void FreeSpace(L4tCall& c) {
  std::optional<Reservation> r;
  {
    absl::MutexLock l(&c.session.mu);
    r = c.session.as.TakeReservation(c.As<ha::FreeSpace>().offset);
  }
  if (!r) return c.Answer(0);
  ForwardSpec f{kAs, ga::kFreeSpace, Bytes(ga::FreeSpace{r->offset, r->pages, r->page_size})};
  f.back = [](NvError, std::span<const uint8_t>, std::span<uint8_t>) { return 0; };
  Forward(c, std::move(f));
}

void GetVaRegions(L4tCall& c) {
  ga::GetVaRegions g{};
  g.buf_addr = 1;
  g.buf_size = sizeof g.regions;
  L4tCaller& caller = c.req.caller;
  ForwardSpec f{kAs, ga::kGetVaRegions, Bytes(g)};
  f.back = [&caller](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& gr = *reinterpret_cast<const ga::GetVaRegions*>(guest.data());
    auto& hr = *reinterpret_cast<ha::GetVaRegions*>(l4t.data());
    static_assert(sizeof(ga::VaRegion) == sizeof(ha::VaRegion));
    // As many whole regions as buf_size holds; the full size back (L4T-AS-2).
    const size_t n = std::min<size_t>(hr.buf_size / sizeof(ha::VaRegion), std::size(gr.regions));
    if (n > 0 && !caller.Write(hr.buf_addr, {reinterpret_cast<const uint8_t*>(gr.regions),
                                             n * sizeof(ha::VaRegion)}))
      return EFAULT;
    hr.buf_size = sizeof gr.regions;
    return 0;
  };
  Forward(c, std::move(f));
}

}  // namespace

void ServeAs(L4tCall& c) {
  switch (c.desc.code) {
    case ha::kBindChannel: return BindChannel(c);
    case ha::kAllocSpace32:
    case ha::kAllocSpace: return AllocSpace(c);
    case ha::kFreeSpace: return FreeSpace(c);
    case ha::kUnmapBuffer: return UnmapBuffer(c);
    case ha::kMapBufferEx: return MapBufferEx(c);
    case ha::kGetVaRegions: return GetVaRegions(c);
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
