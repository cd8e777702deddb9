#include "hostshim/sim/memory/block_linear.h"

#include <algorithm>
#include <cstring>

namespace nvsentry::hostshim::sim {

uint64_t BlockLinearSurface::Offset(uint64_t x, uint64_t y, uint64_t z) const {
  const uint64_t z_in_block = z & (BlockSlices() - 1);
  const uint64_t gob_row_in_block = (y % BlockRows()) / kGobRows;
  return (z >> block_depth_log2) * LayerBytes() + (y / BlockRows()) * WidthInGobs() * BlockBytes() +
         (x / kGobWidth) * BlockBytes() +
         (z_in_block << block_height_log2) * kGobBytes +  // a block's slices follow its rows
         gob_row_in_block * kGobBytes +
         GobOffset(static_cast<uint32_t>(x % kGobWidth), static_cast<uint32_t>(y % kGobRows));
}

bool BlockLinearSurface::FitsAddressSpace() const {
  using u128 = unsigned __int128;
  const u128 layers = (u128{depth} + BlockSlices() - 1) / BlockSlices();
  return layers * BlocksHigh() * WidthInGobs() * BlockBytes() <= (u128{1} << 40);
}

bool InsideSurface(const BlockLinearSurface& s, const SurfaceBox& box) {
  if (box.width == 0 || box.rows == 0) return true;
  const uint64_t slices = (s.depth + s.BlockSlices() - 1) / s.BlockSlices() * s.BlockSlices();
  // Surfaces are below 2^40 bytes (FitsAddressSpace), so these sums cannot wrap.
  return box.x + box.width <= s.WidthInGobs() * kGobWidth &&
         box.y + box.rows <= s.BlocksHigh() * s.BlockRows() && box.z < slices;
}

void ForEachPiece(const BlockLinearSurface& s, const SurfaceBox& box,
                  absl::FunctionRef<void(uint64_t, uint64_t, uint32_t)> fn) {
  if (box.width == 0 || box.rows == 0) return;
  const uint64_t x_end = box.x + box.width, y_end = box.y + box.rows;
  const uint64_t block_rows = s.BlockRows(), block_bytes = s.BlockBytes();
  const uint64_t slice_base = (box.z >> s.block_depth_log2) * s.LayerBytes() +
                              ((box.z & (s.BlockSlices() - 1)) << s.block_height_log2) * kGobBytes;
  const uint64_t row_of_blocks = s.WidthInGobs() * block_bytes;
  for (uint64_t by = box.y / block_rows; by * block_rows < y_end; ++by) {
    const uint64_t y0 = std::max(box.y, by * block_rows);
    const uint64_t y1 = std::min(y_end, (by + 1) * block_rows);
    for (uint64_t gx = box.x / kGobWidth; gx * kGobWidth < x_end; ++gx) {
      const uint64_t gob_x = gx * kGobWidth;
      const uint32_t xa = static_cast<uint32_t>(std::max(box.x, gob_x) - gob_x);
      const uint32_t xb = static_cast<uint32_t>(std::min(x_end, gob_x + kGobWidth) - gob_x);
      const uint64_t block = slice_base + by * row_of_blocks + gx * block_bytes;
      for (uint64_t gy = y0 / kGobRows; gy * kGobRows < y1; ++gy) {
        const uint64_t gob_y = gy * kGobRows;
        const uint32_t ya = static_cast<uint32_t>(std::max(y0, gob_y) - gob_y);
        const uint32_t yb = static_cast<uint32_t>(std::min(y1, gob_y + kGobRows) - gob_y);
        const uint64_t gob = block + (gy - by * (block_rows / kGobRows)) * kGobBytes;
        // Address order: x5, then y2 y1, then x4, then y0 (GobOffset's bits above the 16 bytes).
        for (uint32_t x5 = 0; x5 < 2; ++x5) {
          for (uint32_t y21 = 0; y21 < 4; ++y21) {
            for (uint32_t x4 = 0; x4 < 2; ++x4) {
              const uint32_t start = x5 * 32 + x4 * 16;
              const uint32_t a = std::max(xa, start), b = std::min(xb, start + 16);
              if (a >= b) continue;
              for (uint32_t y0b = 0; y0b < 2; ++y0b) {
                const uint32_t y = y21 * 2 + y0b;
                if (y < ya || y >= yb) continue;
                fn(gob + GobOffset(a, y), (gob_y + y - box.y) * box.width + (gob_x + a - box.x),
                   b - a);
              }
            }
          }
        }
      }
    }
  }
}

bool BlockLinearAccess::Read(GpuMemory* mem, uint64_t base, const BlockLinearSurface& s,
                             const SurfaceBox& box, std::span<uint8_t> rows, MmuFault* fault) {
  scratch_.resize(rows.size());
  runs_.clear();
  uint64_t pos = 0;
  ForEachPiece(s, box, [&](uint64_t off, uint64_t, uint32_t n) {
    const uint64_t va = base + off;
    if (!runs_.empty() && runs_.back().va + runs_.back().dst.size() == va) {
      runs_.back().dst = std::span<uint8_t>(runs_.back().dst.data(), runs_.back().dst.size() + n);
    } else {
      runs_.push_back(GpuRead{va, std::span<uint8_t>(scratch_.data() + pos, n)});
    }
    pos += n;
  });
  if (!mem->ReadMany(runs_)) {
    // ReadMany says only that something failed: read in order to find what, as a pitch read would.
    for (const GpuRead& r : runs_)
      if (!mem->Read(r.va, r.dst, fault)) return false;
  }
  pos = 0;
  ForEachPiece(s, box, [&](uint64_t, uint64_t at, uint32_t n) {
    std::memcpy(rows.data() + at, scratch_.data() + pos, n);
    pos += n;
  });
  return true;
}

bool BlockLinearAccess::Write(GpuMemory* mem, uint64_t base, const BlockLinearSurface& s,
                              const SurfaceBox& box, std::span<const uint8_t> rows,
                              MmuFault* fault) {
  scratch_.resize(rows.size());
  runs_.clear();
  uint64_t pos = 0;
  ForEachPiece(s, box, [&](uint64_t off, uint64_t at, uint32_t n) {
    std::memcpy(scratch_.data() + pos, rows.data() + at, n);
    const uint64_t va = base + off;
    if (!runs_.empty() && runs_.back().va + runs_.back().dst.size() == va) {
      runs_.back().dst = std::span<uint8_t>(runs_.back().dst.data(), runs_.back().dst.size() + n);
    } else {
      runs_.push_back(GpuRead{va, std::span<uint8_t>(scratch_.data() + pos, n)});
    }
    pos += n;
  });
  for (const GpuRead& r : runs_)
    if (!mem->Write(r.va, r.dst, fault)) return false;
  return true;
}

}  // namespace nvsentry::hostshim::sim
