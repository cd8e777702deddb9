// The DMA copy engine, class 0xB0B5. LAUNCH_DMA copies LINE_LENGTH_IN bytes (or LINE_COUNT such
// lines, PITCH_IN / PITCH_OUT apart, with MULTI_LINE_ENABLE) between pitch surfaces through a
// bounce buffer of at most kDmaBounceBytes: GpuMemory::Read then Write, in large chunks, lines that
// touch each other coalesced into one run; a run of 8 MiB or more is copied by two threads, each
// through a 1 MiB buffer (the buffers are page aligned: aligned_buffer.h). With REMAP_ENABLE the
// line length counts elements and each destination component comes from a source component, a
// constant or is left alone; a remap whose components are all constants is a fill. Then the
// optional semaphore release (one or four words, or a reduction) and interrupt. A block-linear
// source or destination is copied by dma_block_linear.cc. Physical addresses are refused (a guest
// must never name physical memory): that stops the channel, as does a semaphore type or
// reduction the engine does not have.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "hostshim/sim/engines/cp_state.h"
#include "hostshim/sim/engines/helper_thread.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {
using methods::Bits;
namespace d = methods::dma;

// Runs at least this long are copied by two threads at once (CopyTwoWays), each through a
// buffer of kSplitChunk. Measured guest to guest with process_vm_readv/writev (2 CPUs, huge
// pages, aligned buffers): 1 MiB chunks at 1.05 of memcpy's rate, 2 MiB at 1.11, 256 KiB at 0.71
// (more calls into the kernel, each pinning its pages anew).
constexpr uint64_t kSplitBytes = 8u << 20;
constexpr uint64_t kSplitChunk = 1u << 20;

// Copies `length` bytes from `s` to `t` through `buf`, adding what it copied to *done; false with
// *f on a fault.
bool CopyRun(GpuMemory* mem, uint64_t s, uint64_t t, uint64_t length, std::span<uint8_t> buf,
             uint64_t* done, MmuFault* f) {
  for (uint64_t at = 0; at < length;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), length - at));
    std::span<uint8_t> b = buf.first(n);
    if (!mem->Read(s + at, b, f) || !mem->Write(t + at, b, f)) return false;
    at += n;
    *done += n;
  }
  return true;
}

// The split copies' buffers are kept for the next copy (a fresh megabyte costs 256 page faults
// inside the copy), a few for the whole sentry; copies beyond them allocate their own.
class SplitBuffers {
 public:
  static constexpr size_t kKept = 4;
  AlignedBuffer Take() {
    absl::MutexLock l(&mu_);
    if (kept_.empty()) return AlignedBuffer(kSplitChunk);
    AlignedBuffer b = std::move(kept_.back());
    kept_.pop_back();
    return b;
  }
  void Give(AlignedBuffer b) {
    absl::MutexLock l(&mu_);
    if (kept_.size() < kKept) kept_.push_back(std::move(b));
  }

 private:
  absl::Mutex mu_;
  std::vector<AlignedBuffer> kept_ ABSL_GUARDED_BY(mu_);
};

SplitBuffers& SplitBufferPool() {
  static SplitBuffers* pool = new SplitBuffers;
  return *pool;
}

// A large copy by two threads at once, like a copy engine's parallel units. Guest memory is
// reached with process_vm_readv/writev, whose per-page pinning costs about what the copy does, so
// a second thread nearly doubles the rate on a machine with two cores or more. The threads take
// the next kSplitChunk bytes while any are left, so one that is slowed (another process on its
// CPU) does less rather than holding the other up. A thread stops at its first fault and the
// other soon after; the fault reported is that of the lowest chunk, as a copy in order would.
bool CopyTwoWays(GpuMemory* mem, uint64_t s, uint64_t t, uint64_t length, uint64_t* done,
                 MmuFault* f) {
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  struct Worker {
    uint64_t done = 0;
    uint64_t failed_at = UINT64_MAX;  // the chunk that faulted
    MmuFault fault;
  };
  auto work = [&](Worker* w) {
    AlignedBuffer buf = SplitBufferPool().Take();
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t at = next.fetch_add(kSplitChunk, std::memory_order_relaxed);
      if (at >= length) break;
      const std::span<uint8_t> b =
          buf.span().first(static_cast<size_t>(std::min(kSplitChunk, length - at)));
      if (!mem->Read(s + at, b, &w->fault) || !mem->Write(t + at, b, &w->fault)) {
        w->failed_at = at;
        stop.store(true, std::memory_order_relaxed);
        break;
      }
      w->done += b.size();
    }
    SplitBufferPool().Give(std::move(buf));
  };
  Worker first, second;
  {
    HelperThread helper([&] { work(&second); });
    work(&first);
  }
  *done += first.done + second.done;
  if (first.failed_at == UINT64_MAX && second.failed_at == UINT64_MAX) return true;
  *f = first.failed_at < second.failed_at ? first.fault : second.fault;
  return false;
}

}  // namespace

Exec CommandProcessor::State::DmaTrigger(uint32_t method, uint32_t value) {
  ++stats.dma_copies;
  uint32_t transfer = Bits(value, d::kTransferHi, d::kTransferLo);
  if (transfer != 0) {
    if (value & (d::kSrcPhysical | d::kDstPhysical)) {
      return MethodError(methods::kClassDma, d::kLaunchDma, value,
                         fmt::format("DMA LAUNCH_DMA 0x{:08X}: physical addressing", value));
    }
    if (DmaCopy(value) == Exec::kStop) return Exec::kStop;
  }
  uint32_t sem = Bits(value, d::kSemaphoreTypeHi, d::kSemaphoreTypeLo);
  if (sem == d::kSemaphoreOneWord || sem == d::kSemaphoreFourWord) {
    uint64_t va =
        (static_cast<uint64_t>(Reg(kDma, d::kSemaphoreA) & 0xFF) << 32) | Reg(kDma, d::kSemaphoreB);
    uint32_t payload = Reg(kDma, d::kSemaphorePayload);
    ++stats.semaphore_releases;
    Exec e =
        (sem == d::kSemaphoreOneWord && (value & d::kReductionEnable))
            ? Reduce(va,
                     static_cast<methods::Reduction>(Bits(value, d::kReductionHi, d::kReductionLo)),
                     (value & d::kReductionUnsigned) == 0, payload)
            : Release(va, payload, sem == d::kSemaphoreOneWord);
    if (e == Exec::kStop) return e;
  } else if (sem != d::kSemaphoreNone) {
    return MethodError(methods::kClassDma, d::kLaunchDma, value,
                       fmt::format("DMA LAUNCH_DMA 0x{:08X}: semaphore type {}", value, sem));
  }
  if (Bits(value, d::kInterruptHi, d::kInterruptLo) != 0) Interrupt();
  return Exec::kOk;
}

Exec CommandProcessor::State::DmaCopy(uint32_t launch) {
  uint64_t src = (static_cast<uint64_t>(Reg(kDma, d::kOffsetInUpper) & 0xFF) << 32) |
                 Reg(kDma, d::kOffsetInLower);
  uint64_t dst = (static_cast<uint64_t>(Reg(kDma, d::kOffsetOutUpper) & 0xFF) << 32) |
                 Reg(kDma, d::kOffsetOutLower);
  uint64_t length = Reg(kDma, d::kLineLengthIn);
  bool multi = (launch & d::kMultiLine) != 0;
  uint64_t lines = multi ? Reg(kDma, d::kLineCount) : 1;
  // Pitches are signed: a negative one walks the lines backwards (deko3d's FlipY copies).
  const int64_t pitch_in = multi ? static_cast<int32_t>(Reg(kDma, d::kPitchIn)) : 0;
  const int64_t pitch_out = multi ? static_cast<int32_t>(Reg(kDma, d::kPitchOut)) : 0;

  const bool remap = (launch & d::kRemap) != 0;
  const DmaRemap rm = remap ? DmaRemap::From(Reg(kDma, d::kRemapComponents),
                                             Reg(kDma, d::kRemapConstA), Reg(kDma, d::kRemapConstB))
                            : DmaRemap{};
  uint64_t src_line = remap ? length * rm.src_elem() : length;
  uint64_t dst_line = remap ? length * rm.dst_elem() : length;
  if (lines > kMaxDmaLines || dst_line * lines > kMaxDmaBytes || src_line * lines > kMaxDmaBytes) {
    return Error(fmt::format("DMA copy of {} lines of {} bytes is over the simulator's limit",
                             lines, dst_line));
  }
  if (dst_line == 0 || lines == 0) return Exec::kOk;
  if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, dst, true});
  if (!(launch & d::kSrcPitch) || !(launch & d::kDstPitch)) {
    return DmaCopyBlockLinear(
        launch, DmaLines{src, dst, length, lines, pitch_in, pitch_out, remap ? &rm : nullptr});
  }
  // Lines that touch each other on every side that is accessed are one run.
  bool reads_src = !remap || rm.uses_src;
  if (lines > 1 && pitch_out == static_cast<int64_t>(dst_line) &&
      (!reads_src || pitch_in == static_cast<int64_t>(src_line))) {
    src_line *= lines;
    dst_line *= lines;
    length *= lines;
    lines = 1;
  }
  if (bounce.empty()) bounce = AlignedBuffer(kDmaBounceBytes);
  MmuFault f;
  bool filled = false;  // a fill's pattern is the same for every chunk: build it once
  for (uint64_t l = 0; l < lines; ++l) {
    // Modulo 2^64, as the GPU's address arithmetic: a line before VA 0 is an unmapped fault.
    const uint64_t s = src + static_cast<uint64_t>(static_cast<int64_t>(l) * pitch_in);
    const uint64_t t = dst + static_cast<uint64_t>(static_cast<int64_t>(l) * pitch_out);
    if (!remap) {
      uint64_t done = 0;
      const bool ok = length >= kSplitBytes
                          ? CopyTwoWays(env.memory, s, t, length, &done, &f)
                          : CopyRun(env.memory, s, t, length, bounce.span(), &done, &f);
      stats.dma_bytes += done;
      if (!ok) return Fault(f);
      continue;
    }
    // Remap: elements in chunks; the bounce buffer holds a chunk of source elements, then the
    // destination elements after them.
    const uint32_t se = rm.src_elem(), de = rm.dst_elem();
    size_t per_chunk = kDmaBounceBytes / (se + de);
    uint8_t* sbuf = bounce.data();
    uint8_t* dbuf = bounce.data() + per_chunk * se;
    const bool fill = rm.fill();
    for (uint64_t e = 0; e < length;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(per_chunk, length - e));
      std::span<uint8_t> dspan(dbuf, n * de);
      if (rm.uses_src && !env.memory->Read(s + e * se, std::span<uint8_t>(sbuf, n * se), &f)) {
        return Fault(f);
      }
      if (rm.keeps_dst && !env.memory->Read(t + e * de, dspan, &f)) return Fault(f);
      if (!fill || !filled) {
        rm.Apply(sbuf, dbuf, n);
        filled = true;  // the first chunk is the largest, so later ones reuse its prefix
      }
      if (!env.memory->Write(t + e * de, dspan, &f)) return Fault(f);
      stats.dma_bytes += n * de;
      e += n;
    }
  }
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
