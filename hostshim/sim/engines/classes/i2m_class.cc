// Inline-to-memory (class 0xA140, and the same methods in 3D and compute): LAUNCH_DMA describes
// a destination of LINE_COUNT lines of LINE_LENGTH_IN bytes, and the data words follow in
// LOAD_INLINE_DATA. A pitch destination's lines are PITCH_OUT apart and written as the words
// arrive (no buffering). A block-linear one (SET_DST_BLOCK_SIZE, WIDTH, HEIGHT, DEPTH, LAYER,
// ORIGIN_BYTES_X, ORIGIN_SAMPLES_Y) is gathered a GOB's eight rows at a time and written then,
// whole GOBs in single accesses, at the transfer's end, when the gathered bytes pass kMaxBand,
// or when a new LAUNCH_DMA abandons the transfer. Completion can release a semaphore (one or four
// words) and raise an interrupt.
#include <algorithm>
#include <string>

#include "hostshim/sim/engines/cp_state.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
using methods::Index;
namespace m = methods::i2m;
namespace bs = methods::block_size;

constexpr uint64_t kMaxBand = 1u << 18;
}  // namespace

Exec CommandProcessor::State::I2mTrigger(EngineKind k, uint32_t method, uint32_t value) {
  if (method == Index(m::kLoadInlineData)) {
    bool stopped = false;
    I2mData(k, &value, 1, &stopped);
    return stopped ? Exec::kStop : Exec::kOk;
  }
  // LAUNCH_DMA. A block-linear transfer still gathering bytes is written as far as it got, as
  // a pitch one's words are written as they arrive.
  if (i2m[k].active && i2m[k].block_linear && I2mFlushBand(k) == Exec::kStop) return Exec::kStop;
  I2mProgress& p = i2m[k];
  p = I2mProgress{};
  p.launch = value;
  p.dst =
      (static_cast<uint64_t>(Reg(k, m::kOffsetOutUpper) & 0x1FFFFFF) << 32) | Reg(k, m::kOffsetOut);
  p.line_length = Reg(k, m::kLineLengthIn);
  p.line_count = Reg(k, m::kLineCount);
  p.pitch = static_cast<int32_t>(Reg(k, m::kPitchOut));  // signed, as the DMA engine's
  if ((value & m::kDstPitch) == 0) {
    p.block_linear = true;
    const uint32_t block = Reg(k, m::kDstBlockSize);
    BlockLinearSurface& s = p.surface;
    s.block_height_log2 = Bits(block, bs::kHeightHi, bs::kHeightLo);
    s.block_depth_log2 = Bits(block, bs::kDepthHi, bs::kDepthLo);
    s.width = Reg(k, m::kDstWidth);
    s.height = Reg(k, m::kDstHeight);
    s.depth = std::max<uint32_t>(Reg(k, m::kDstDepth), 1);  // a 2D surface may leave DEPTH 0
    p.origin = SurfaceBox{.x = Bits(Reg(k, m::kDstOriginX), m::kOriginXHi, 0),
                          .y = Bits(Reg(k, m::kDstOriginY), m::kOriginYHi, 0),
                          .z = Reg(k, m::kDstLayer),
                          .width = p.line_length,
                          .rows = p.line_count};
    std::string why;
    if (Bits(block, bs::kWidthHi, bs::kWidthLo) != 0) {
      why = "blocks are one GOB wide";
    } else if (s.block_height_log2 > kMaxBlockLog2 || s.block_depth_log2 > kMaxBlockLog2) {
      why = "block heights and depths are 1 to 32 GOBs";
    } else if (!s.FitsAddressSpace()) {
      why = "the surface is larger than the GPU's address space";
    } else if (!InsideSurface(s, p.origin)) {
      why = fmt::format("{} lines of {} bytes from ({}, {}) of layer {} leave the {}x{}x{} surface",
                        p.line_count, p.line_length, p.origin.x, p.origin.y, p.origin.z, s.width,
                        s.height, s.depth);
    }
    if (!why.empty()) {
      p.block_linear = false;
      return MethodError(
          ClassOf(k), m::kLaunchDma, value,
          fmt::format("LAUNCH_DMA 0x{:08X}: block-linear destination (block size 0x{:X}): {}",
                      value, block, why));
    }
    if (p.line_length == 0 || p.line_count == 0) return I2mComplete(k);
    p.active = true;
    return Exec::kOk;
  }
  // Lines that touch each other are one long line.
  if (p.line_count > 1 && p.pitch >= 0 && static_cast<uint64_t>(p.pitch) == p.line_length) {
    p.line_length *= p.line_count;
    p.line_count = 1;
  }
  if (p.line_length == 0 || p.line_count == 0) return I2mComplete(k);
  p.active = true;
  return Exec::kOk;
}

size_t CommandProcessor::State::I2mData(EngineKind k, const uint32_t* words, size_t n,
                                        bool* stopped) {
  I2mProgress& p = i2m[k];
  const uint8_t* src = reinterpret_cast<const uint8_t*>(words);
  uint64_t len = static_cast<uint64_t>(n) * 4, used = 0;
  while (p.active && used < len) {
    uint64_t chunk = std::min<uint64_t>(p.line_length - p.in_line, len - used);
    if (p.block_linear) {
      p.band.insert(p.band.end(), src + used, src + used + chunk);
    } else {
      MmuFault f;
      uint64_t at = p.dst + static_cast<uint64_t>(int64_t{p.line} * p.pitch) + p.in_line;
      if (env.memory == nullptr) {
        f = MmuFault{MmuFault::Kind::kUnmapped, at, true};
      }
      if (env.memory == nullptr ||
          !env.memory->Write(at, std::span(src + used, static_cast<size_t>(chunk)), &f)) {
        Fault(f);
        *stopped = true;
        return static_cast<size_t>(used / 4);
      }
      stats.i2m_bytes += chunk;
    }
    used += chunk;
    p.in_line += chunk;
    bool flush = p.block_linear && p.band.size() >= kMaxBand;
    if (p.in_line == p.line_length) {
      p.in_line = 0;
      ++p.line;
      // A block-linear band ends with a GOB's rows, or the transfer.
      flush |= p.block_linear && ((p.origin.y + p.line) % kGobRows == 0 || p.line == p.line_count);
    }
    if (flush && I2mFlushBand(k) == Exec::kStop) {
      *stopped = true;
      return static_cast<size_t>((used + 3) / 4);
    }
    if (p.in_line == 0 && p.line == p.line_count) {
      p.active = false;
      if (I2mComplete(k) == Exec::kStop) {
        *stopped = true;
        return static_cast<size_t>((used + 3) / 4);
      }
    }
  }
  if (used < len) {
    // Data with no transfer in progress (or past its end): counted, not written.
    size_t extra = n - static_cast<size_t>((used + 3) / 4);
    if (extra != 0) {
      Unmodelled(k, Index(m::kLoadInlineData), 0);
      stats.unmodelled += extra - 1;
    }
  }
  return n;
}

Exec CommandProcessor::State::I2mFlushBand(EngineKind k) {
  I2mProgress& p = i2m[k];
  if (p.band.empty()) return Exec::kOk;
  const std::span<const uint8_t> band(p.band);
  uint64_t at = 0;
  MmuFault f;
  // Bytes [x, x + width) of `rows` lines from `line` on: the band's next width * rows bytes.
  auto write = [&](uint64_t line, uint64_t x, uint64_t width, uint64_t rows) {
    if (width == 0 || rows == 0) return true;
    const SurfaceBox box{
        .x = p.origin.x + x, .y = p.origin.y + line, .z = p.origin.z, .width = width, .rows = rows};
    if (env.memory == nullptr) {
      f = MmuFault{MmuFault::Kind::kUnmapped, p.dst, true};
      return false;
    }
    if (!block_linear.Write(env.memory, p.dst, p.surface, box, band.subspan(at, width * rows),
                            &f)) {
      return false;
    }
    at += width * rows;
    stats.i2m_bytes += width * rows;
    return true;
  };
  // The band runs from byte band_x of line band_line to byte in_line of line `line`.
  bool ok;
  if (p.line == p.band_line) {
    ok = write(p.line, p.band_x, p.in_line - p.band_x, 1);
  } else {
    uint64_t full = p.band_line;  // the first whole line
    ok = p.band_x == 0 || write(full++, p.band_x, p.line_length - p.band_x, 1);
    ok = ok && write(full, 0, p.line_length, p.line - full) && write(p.line, 0, p.in_line, 1);
  }
  p.band.clear();
  p.band_line = p.line;
  p.band_x = p.in_line;
  if (!ok) {
    p.active = false;
    return Fault(f);
  }
  return Exec::kOk;
}

Exec CommandProcessor::State::I2mComplete(EngineKind k) {
  I2mProgress& p = i2m[k];
  p.active = false;
  if (Bits(p.launch, m::kCompletionHi, m::kCompletionLo) == m::kCompletionReleaseSemaphore) {
    uint64_t va =
        (static_cast<uint64_t>(Reg(k, m::kSemaphoreA) & 0x1FFFFFF) << 32) | Reg(k, m::kSemaphoreB);
    ++stats.semaphore_releases;
    if (Release(va, Reg(k, m::kSemaphoreC), (p.launch & m::kSemaphoreOneWord) != 0) ==
        Exec::kStop) {
      return Exec::kStop;
    }
  }
  if (Bits(p.launch, m::kInterruptHi, m::kInterruptLo) == 1) Interrupt();
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
