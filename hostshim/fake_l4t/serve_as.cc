// /dev/nvhost-as-gpu of the fake Jetson: L4T calls as the sim's AsDevice calls. Opening the node
// made the address space (fake_jetson.cc: ALLOC_AS with the default big page size, as r32.7's
// open does).
#include <algorithm>
#include <cerrno>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/l4t/nvgpu_as.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"

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
  SelfCaller caller;
  caller.Name(fd, ch->backend);
  ForwardSpec f{kAs, ga::kBindChannel, Bytes(ga::BindChannel{static_cast<uint32_t>(fd)})};
  f.caller = &caller;
  f.back = [](NvError err, std::span<const uint8_t>, std::span<uint8_t>) { return ErrnoOf(err); };
  Forward(c, std::move(f));
}

void MapBufferEx(L4tCall& c) {
  const auto a = c.As<ha::MapBufferEx>();
  ga::MapBufferEx g{};
  int32_t kind = 0;
  if (int e = MapBufferExToGuest(a.flags, a.compr_kind, a.incompr_kind, &g.flags, &kind); e != 0)
    return c.Answer(e);
  // page_size: 0 (best fit) or one the address space has; the sim picks by alignment itself.
  if (a.page_size != 0 && a.page_size != 0x1000 && a.page_size != 0x10000 && a.page_size != 0x20000)
    return c.Answer(EINVAL);
  g.kind = static_cast<uint32_t>(kind);
  g.mem_id = a.dmabuf_fd;  // the fake's handles are nvmap ids
  g.buffer_offset = a.buffer_offset;
  g.mapping_size = a.mapping_size;
  g.offset_or_align = a.offset;
  ForwardSpec f{kAs, ga::kMapBufferEx, Bytes(g)};
  f.back = [](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    reinterpret_cast<ha::MapBufferEx*>(l4t.data())->offset =
        reinterpret_cast<const ga::MapBufferEx*>(guest.data())->offset_or_align;
    return 0;
  };
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
    // As many whole regions as buf_size holds; the full size back.
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
    // NVGPU32's ALLOC_SPACE is the guest's very code; the LP64 one has the same layout.
    case ha::kAllocSpace32:
    case ha::kAllocSpace: return ForwardSame(c, kAs, ga::kAllocSpace);
    case ha::kFreeSpace: return ForwardSame(c, kAs, ga::kFreeSpace);
    case ha::kUnmapBuffer: return ForwardSame(c, kAs, ga::kUnmapBuffer);
    case ha::kMapBufferEx: return MapBufferEx(c);
    case ha::kGetVaRegions: return GetVaRegions(c);
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
