// The GPU's native surface layout, block-linear, and access to a box of such a surface through
// GpuMemory. A GOB is 64 bytes by 8 rows (512 bytes) in 16-byte pieces: byte x of row y of a GOB
// is at bit-interleaved offset x5 y2 y1 x4 y0 x3 x2 x1 x0 (GobOffset). GOBs stack into blocks
// one GOB wide, 2^block_height GOBs tall and 2^block_depth GOBs deep (a block's GOBs go down its
// rows first, then through its slices); blocks go across the surface's width (rounded up to
// whole GOBs), then down its height, then through its depth. Facts and sources:
// docs/simulated-gpu.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "hostshim/sim/memory/gpu_memory.h"

namespace nvsentry::hostshim::sim {

constexpr uint32_t kGobWidth = 64;  // bytes
constexpr uint32_t kGobRows = 8;
constexpr uint32_t kGobBytes = kGobWidth * kGobRows;
constexpr uint32_t kMaxBlockLog2 = 5;  // 32 GOBs: the class headers' largest block height/depth

// The offset of byte x (< 64) of row y (< 8) inside a GOB.
constexpr uint32_t GobOffset(uint32_t x, uint32_t y) {
  return ((x & 32) << 3) | ((y & 6) << 5) | ((x & 16) << 1) | ((y & 1) << 4) | (x & 15);
}

struct BlockLinearSurface {
  uint64_t width = 0;   // bytes of a row
  uint64_t height = 0;  // rows
  uint64_t depth = 1;   // slices
  uint32_t block_height_log2 = 0;
  uint32_t block_depth_log2 = 0;

  uint64_t WidthInGobs() const { return (width + kGobWidth - 1) / kGobWidth; }
  uint64_t BlockRows() const { return uint64_t{kGobRows} << block_height_log2; }
  uint64_t BlockSlices() const { return uint64_t{1} << block_depth_log2; }
  uint64_t BlockBytes() const {
    return uint64_t{kGobBytes} << (block_height_log2 + block_depth_log2);
  }
  uint64_t BlocksHigh() const { return (height + BlockRows() - 1) / BlockRows(); }
  // Bytes of one layer of blocks (BlockSlices() slices of the whole width and height).
  uint64_t LayerBytes() const { return BlocksHigh() * WidthInGobs() * BlockBytes(); }
  // Bytes from the surface's start to the end of its last block.
  uint64_t SizeBytes() const {
    return ((depth + BlockSlices() - 1) / BlockSlices()) * LayerBytes();
  }
  // Whether the surface's blocks fit in the GPU's 40-bit address space (the arithmetic above is
  // exact only then; the engines refuse larger surfaces).
  bool FitsAddressSpace() const;
  // The offset of byte x of row y of slice z from the surface's start.
  uint64_t Offset(uint64_t x, uint64_t y, uint64_t z) const;
};

// Bytes [x, x + width) of rows [y, y + rows) of slice z.
struct SurfaceBox {
  uint64_t x = 0, y = 0, z = 0;
  uint64_t width = 0, rows = 0;
};

// Whether `box` is inside the surface's blocks: its bytes within the width rounded up to whole
// GOBs, its rows within the height rounded up to whole blocks, its slice within the depth rounded
// up likewise. Outside, the layout's arithmetic would alias other rows or slices.
bool InsideSurface(const BlockLinearSurface& s, const SurfaceBox& box);

// Calls fn(surface_offset, box_offset, length) for every piece of `box`: a run of at most 16
// bytes of one row inside one GOB, where box_offset is its place in the box stored row after
// row, box.width bytes each. Each byte of the box is in exactly one piece. Pieces come in
// address order inside a GOB, and GOB after GOB down a block's rows, so consecutive pieces are
// often adjacent in memory (a whole GOB's are).
void ForEachPiece(const BlockLinearSurface& s, const SurfaceBox& box,
                  absl::FunctionRef<void(uint64_t, uint64_t, uint32_t)> fn);

// Moves boxes between a block-linear surface at GPU VA `base` and rows of bytes in sentry memory
// (`rows`: the box stored row after row). Adjacent pieces are merged into one access; reads go
// out together through GpuMemory::ReadMany. Only the box's own bytes are touched, so a box that
// runs past a mapping faults where it leaves it, as a pitch access would: false with *fault set
// (reads: the first run in address order that fails; writes: the first failing write, the runs
// before it stored). Keeps its buffers between calls; not thread-safe.
class BlockLinearAccess {
 public:
  bool Read(GpuMemory* mem, uint64_t base, const BlockLinearSurface& s, const SurfaceBox& box,
            std::span<uint8_t> rows, MmuFault* fault);
  bool Write(GpuMemory* mem, uint64_t base, const BlockLinearSurface& s, const SurfaceBox& box,
             std::span<const uint8_t> rows, MmuFault* fault);

 private:
  std::vector<uint8_t> scratch_;  // the box's bytes in surface order, runs back to back
  std::vector<GpuRead> runs_;
};

}  // namespace nvsentry::hostshim::sim
