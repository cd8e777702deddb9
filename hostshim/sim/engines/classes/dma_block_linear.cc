// DMA copies with a block-linear side (LAUNCH_DMA SRC_MEMORY_LAYOUT or DST_MEMORY_LAYOUT clear).
// A block-linear side is the surface at OFFSET_IN/OUT described by SET_SRC/DST_BLOCK_SIZE,
// WIDTH, HEIGHT, DEPTH, LAYER and ORIGIN: line l of the copy is row ORIGIN.Y + l of slice LAYER,
// from byte ORIGIN.X on; a pitch side is as in a pitch copy. Without a remap, widths, origins
// and the line length count bytes; with one, elements of the side's size, as NVIDIA's and Mesa's
// drivers program them. The copy goes in bands of rows (or of one row's elements, for very long
// rows) through the bounce buffer: source band read, remapped, destination band written, so a
// fault stops it where a copy in order would.
#include <algorithm>
#include <string>
#include <tuple>

#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
namespace d = methods::dma;
namespace bs = methods::block_size;

struct Side {
  bool block_linear = false;
  uint64_t va = 0;
  int64_t pitch = 0;  // pitch side
  uint32_t elem = 1;  // bytes per element
  BlockLinearSurface surface;
  SurfaceBox box;  // the whole copy's box on a block-linear side
};

// A block-linear side from its six registers (SET_*_BLOCK_SIZE, then WIDTH, HEIGHT, DEPTH, LAYER,
// ORIGIN, consecutive in the class): an empty answer, or why the engine refuses it.
std::string ParseSurface(const uint32_t* regs, const DmaLines& c, Side* side) {
  const uint32_t block = regs[0];
  if (Bits(block, bs::kWidthHi, bs::kWidthLo) != 0) {
    return fmt::format("a block {} wide (GM20B's blocks are one GOB wide)",
                       Bits(block, bs::kWidthHi, bs::kWidthLo));
  }
  BlockLinearSurface& s = side->surface;
  s.block_height_log2 = Bits(block, bs::kHeightHi, bs::kHeightLo);
  s.block_depth_log2 = Bits(block, bs::kDepthHi, bs::kDepthLo);
  // GOB_HEIGHT (15:12) is not read: Maxwell's GOBs are 8 rows (FERMI_8) whatever it says.
  if (s.block_height_log2 > kMaxBlockLog2 || s.block_depth_log2 > kMaxBlockLog2) {
    return fmt::format("block size 0x{:X}: heights and depths are 1 to 32 GOBs", block);
  }
  s.width = uint64_t{regs[1]} * side->elem;
  s.height = regs[2];
  s.depth = std::max<uint32_t>(regs[3], 1);  // a 2D surface may leave DEPTH 0
  if (!s.FitsAddressSpace()) {
    return fmt::format("a {}x{}x{} surface is larger than the GPU's address space", s.width,
                       s.height, s.depth);
  }
  side->box = SurfaceBox{.x = uint64_t{regs[5] & 0xFFFF} * side->elem,
                         .y = regs[5] >> 16,
                         .z = regs[4],
                         .width = c.length * side->elem,
                         .rows = c.lines};
  if (!InsideSurface(s, side->box)) {
    return fmt::format(
        "{} lines of {} bytes from ({}, {}) of layer {} leave the {}x{}x{} surface's blocks",
        c.lines, side->box.width, side->box.x, side->box.y, side->box.z, s.width, s.height,
        s.depth);
  }
  return "";
}

}  // namespace

Exec CommandProcessor::State::DmaCopyBlockLinear(uint32_t launch, const DmaLines& c) {
  const DmaRemap* rm = c.remap;
  Side src, dst;
  src.block_linear = (launch & d::kSrcPitch) == 0;
  src.va = c.src;
  src.pitch = c.pitch_in;
  src.elem = rm ? rm->src_elem() : 1;
  dst.block_linear = (launch & d::kDstPitch) == 0;
  dst.va = c.dst;
  dst.pitch = c.pitch_out;
  dst.elem = rm ? rm->dst_elem() : 1;
  for (auto [side, first, name] : {std::tuple{&src, d::kSrcBlockSize, "source"},
                                   std::tuple{&dst, d::kDstBlockSize, "destination"}}) {
    if (!side->block_linear) continue;
    const uint32_t* regs = &Reg(kDma, first);
    if (std::string why = ParseSurface(regs, c, side); !why.empty()) {
      return MethodError(
          methods::kClassDma, d::kLaunchDma, launch,
          fmt::format("DMA LAUNCH_DMA 0x{:08X}: block-linear {}: {}", launch, name, why));
    }
  }
  if (bounce.empty()) bounce = AlignedBuffer(kDmaBounceBytes);
  // A band is `rows` lines of `elems` elements; its source and destination bytes share the buffer.
  const uint64_t per_elem = rm ? src.elem + dst.elem : 1;
  uint64_t elems = c.length, rows = 1;
  if (c.length * per_elem <= kDmaBounceBytes) {
    rows = std::min<uint64_t>(c.lines, kDmaBounceBytes / (c.length * per_elem));
  } else {
    elems = kDmaBounceBytes / per_elem;
  }
  const bool reads_src = !rm || rm->uses_src;
  MmuFault f;
  // Moves lines [r0, r0 + nr), elements [e0, e0 + ne) of one side to or from `buf`.
  auto access = [&](const Side& side, uint64_t r0, uint64_t nr, uint64_t e0, uint64_t ne,
                    std::span<uint8_t> buf, bool write) {
    const uint64_t row = ne * side.elem;
    if (side.block_linear) {
      const SurfaceBox box{.x = side.box.x + e0 * side.elem,
                           .y = side.box.y + r0,
                           .z = side.box.z,
                           .width = row,
                           .rows = nr};
      return write ? block_linear.Write(env.memory, side.va, side.surface, box, buf, &f)
                   : block_linear.Read(env.memory, side.va, side.surface, box, buf, &f);
    }
    // Modulo 2^64, as the GPU's address arithmetic: a line before VA 0 is an unmapped fault.
    const uint64_t first =
        side.va + static_cast<uint64_t>(static_cast<int64_t>(r0) * side.pitch) + e0 * side.elem;
    if (side.pitch == static_cast<int64_t>(row)) {  // lines that touch: one access
      return write ? env.memory->Write(first, buf, &f) : env.memory->Read(first, buf, &f);
    }
    for (uint64_t i = 0; i < nr; ++i) {
      const uint64_t va = first + static_cast<uint64_t>(static_cast<int64_t>(i) * side.pitch);
      std::span<uint8_t> line = buf.subspan(i * row, row);
      if (!(write ? env.memory->Write(va, line, &f) : env.memory->Read(va, line, &f))) {
        return false;
      }
    }
    return true;
  };
  for (uint64_t r0 = 0; r0 < c.lines; r0 += rows) {
    const uint64_t nr = std::min(rows, c.lines - r0);
    for (uint64_t e0 = 0; e0 < c.length; e0 += elems) {
      const uint64_t ne = std::min(elems, c.length - e0);
      std::span<uint8_t> sbuf = bounce.span().first(ne * nr * src.elem);
      std::span<uint8_t> dbuf = rm ? bounce.span().subspan(sbuf.size(), ne * nr * dst.elem) : sbuf;
      if (reads_src && !access(src, r0, nr, e0, ne, sbuf, false)) return Fault(f);
      if (rm) {
        if (rm->keeps_dst && !access(dst, r0, nr, e0, ne, dbuf, false)) return Fault(f);
        rm->Apply(sbuf.data(), dbuf.data(), ne * nr);  // the band's lines are back to back
      }
      if (!access(dst, r0, nr, e0, ne, dbuf, true)) return Fault(f);
      stats.dma_bytes += dbuf.size();
    }
  }
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
