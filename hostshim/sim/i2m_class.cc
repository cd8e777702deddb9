// Inline-to-memory (class 0xA140, and the same methods in 3D and compute): LAUNCH_DMA describes
// a pitch destination of LINE_COUNT lines of LINE_LENGTH_IN bytes, PITCH_OUT apart; the data
// words follow in LOAD_INLINE_DATA and are written as they arrive (no buffering). Completion
// can release a semaphore (one or four words) and raise an interrupt. A block-linear destination
// is not modelled: its launch stops the channel.
#include <algorithm>

#include "hostshim/sim/cp_state.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
using methods::Index;
namespace m = methods::i2m;
}  // namespace

Exec CommandProcessor::State::I2mTrigger(EngineKind k, uint32_t method, uint32_t value) {
  if (method == Index(m::kLoadInlineData)) {
    bool stopped = false;
    I2mData(k, &value, 1, &stopped);
    return stopped ? Exec::kStop : Exec::kOk;
  }
  // LAUNCH_DMA
  I2mProgress& p = i2m[k];
  p = I2mProgress{};
  p.launch = value;
  p.dst =
      (static_cast<uint64_t>(Reg(k, m::kOffsetOutUpper) & 0x1FFFFFF) << 32) | Reg(k, m::kOffsetOut);
  p.line_length = Reg(k, m::kLineLengthIn);
  p.line_count = Reg(k, m::kLineCount);
  p.pitch = static_cast<int32_t>(Reg(k, m::kPitchOut));  // signed, as the DMA engine's
  if ((value & m::kDstPitch) == 0) {
    return MethodError(
        ClassOf(k), m::kLaunchDma, value,
        fmt::format("LAUNCH_DMA 0x{:08X}: a block-linear destination is not simulated", value));
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
    {
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
    if (p.in_line == p.line_length) {
      p.in_line = 0;
      if (++p.line == p.line_count) {
        p.active = false;
        if (I2mComplete(k) == Exec::kStop) {
          *stopped = true;
          return static_cast<size_t>((used + 3) / 4);
        }
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
