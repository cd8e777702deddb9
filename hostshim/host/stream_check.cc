#include "hostshim/host/stream_check.h"

#include <algorithm>

#include "abi/gpu_classes.h"
#include "absl/cleanup/cleanup.h"
#include "hostshim/sim/engines/methods.h"
#include "hostshim/sim/engines/pushbuffer.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::host {

namespace {

using sim::methods::Bits;
using sim::methods::Index;
namespace h = sim::methods::host;
namespace t = sim::methods::threed;
constexpr uint32_t kNumMethods = sim::methods::kNumMethods;
constexpr uint32_t kClassHost = sim::methods::kClassHost;
constexpr uint32_t kClass3D = sim::methods::kClass3D;
// The bytes a semaphore release whose address register's low word is `b` may write, from that
// address rounded down to a word: its 16, and the bytes past them that a release at the
// unrounded address (as the simulator writes it) reaches.
uint64_t SemaphoreSpan(uint32_t b) { return 16 + (b & 3); }

std::optional<StreamRefusal> Refuse(uint32_t cls, uint32_t method_byte, uint32_t value,
                                    std::string what) {
  return StreamRefusal{cls, method_byte, value, std::move(what)};
}

std::optional<StreamRefusal> PusherError(std::string what) {
  return StreamRefusal{0, 0, 0, std::move(what)};
}

// The bit of a GM20B class in StreamCheck::reported_.
uint32_t ClassBit(const abi::GpuClass* c) {
  return 1u << static_cast<uint32_t>(c - abi::kGpuClasses.data());
}

}  // namespace

StreamCheck::StreamCheck(StreamRules rules) : rules_(std::move(rules)), regs3d_(kNumMethods, 0) {}

void StreamCheck::BeginSubmission() {
  words_ = steps_ = 0;
  increments_.clear();
  segment_ = 0;
  cuts_.clear();
  cuttable_ = true;
  waits_on_own_ = false;
  footprint_ = {};
  saved_ = {subch_class_, sem_a_, sem_b_, notify_, i2m_dst_};
  undo_.clear();
  saved_mme_.reset();
}

void StreamCheck::Rollback() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it)
    (it->cls == kClass3D ? regs3d_ : regs_[it->cls])[it->method] = it->old;
  undo_.clear();
  subch_class_ = saved_.subch_class;
  sem_a_ = saved_.sem_a;
  sem_b_ = saved_.sem_b;
  notify_ = saved_.notify;
  i2m_dst_ = saved_.i2m_dst;
  if (saved_mme_) mme_ = *std::move(saved_mme_);
  saved_mme_.reset();
  macro_.reset();
  params_.clear();
  in_macro_ = false;
}

void StreamCheck::SetReg(uint32_t cls, std::vector<uint32_t>& regs, uint32_t method,
                         uint32_t value) {
  if (regs[method] == value) return;
  undo_.push_back({cls, method, regs[method]});
  regs[method] = value;
}

void StreamCheck::Footprint(uint64_t va, uint64_t size) {
  if (size == 0) return;
  if (!footprint_.ranges.empty() && footprint_.ranges.back().va == va &&
      footprint_.ranges.back().size == size)
    return;  // inline data, word after word
  if (footprint_.ranges.size() < StreamFootprint::kMaxRanges)
    footprint_.ranges.push_back({va, size});
  else
    footprint_.anywhere = true;
}

void StreamCheck::Reads(uint64_t va, uint64_t size) {
  if (size == 0) return;
  if (footprint_.reads.size() < StreamFootprint::kMaxRanges)
    footprint_.reads.push_back({va, size});
  else
    footprint_.anywhere = true;
}

void StreamCheck::EndCommand(size_t end) {
  if (command_increments_) {
    if (command_other_)
      cuttable_ = false;
    else
      cuts_.push_back(
          {segment_, static_cast<uint32_t>(command_begin_), static_cast<uint32_t>(end)});
  }
  command_increments_ = command_other_ = false;
}

void StreamCheck::Reset() {
  subch_class_.fill(0);
  sem_a_ = sem_b_ = 0;
  std::fill(regs3d_.begin(), regs3d_.end(), 0);
  regs_.clear();
  mme_.Reset();
  macro_.reset();
  params_.clear();
  notify_.clear();
  i2m_dst_.reset();
  undo_.clear();
  saved_mme_.reset();
}

std::optional<StreamRefusal> StreamCheck::Segment(std::span<const uint32_t> words) {
  if (words.empty()) return PusherError("zero-length GPFIFO entry (pusher error)");
  if (words.size() > kMaxWords - words_) {
    return PusherError(fmt::format("a submission of more than {} pushbuffer words", kMaxWords));
  }
  words_ += words.size();
  macro_.reset();  // a call whose command ran past its segment never runs (as simulated)
  absl::Cleanup next = [this] { ++segment_; };  // EndCommand names this entry meanwhile
  command_increments_ = command_other_ = false;
  Cursor cur;
  for (size_t i = 0; i < words.size(); ++i) {
    const uint32_t w = words[i];
    if (cur.remaining != 0) {
      const bool last = cur.remaining == 1;
      if (auto r = Written(cur.subch, cur.method, w, last)) return r;
      --cur.remaining;
      if (cur.remaining == 0) EndCommand(i + 1);
      if (cur.mode == sim::pb::kModeInc) {
        cur.method = (cur.method + 1) & (kNumMethods - 1);
      } else if (cur.mode == sim::pb::kModeIncOnce) {
        cur.method = (cur.method + 1) & (kNumMethods - 1);
        cur.mode = sim::pb::kModeNonInc;
      }
      continue;
    }
    const uint32_t mode = sim::pb::WordMode(w);
    const uint32_t subch = sim::pb::WordSubchannel(w);
    command_begin_ = i;
    switch (mode) {
      case sim::pb::kModeInc:
      case sim::pb::kModeNonInc:
      case sim::pb::kModeIncOnce:
        cur = {sim::pb::WordMethod(w), sim::pb::WordCount(w), subch, mode};
        break;
      case sim::pb::kModeImmediate:
        if (auto r = Written(subch, sim::pb::WordMethod(w), sim::pb::WordImmediate(w), true))
          return r;
        EndCommand(i + 1);
        break;
      case sim::pb::kModeLegacyInc:
        // Word 0 is the NOP; tertiary ops 1..3 set subdevice masks.
        if (w != 0 && sim::pb::LegacyTertOp(w) == 0)
          cur = {sim::pb::LegacyMethod(w), sim::pb::LegacyCount(w), subch, sim::pb::kModeInc};
        break;
      case sim::pb::kModeLegacyNonInc:
        if (sim::pb::LegacyTertOp(w) != 0)
          return PusherError(fmt::format("command word 0x{:08X}: reserved tertiary operation", w));
        cur = {sim::pb::LegacyMethod(w), sim::pb::LegacyCount(w), subch, sim::pb::kModeNonInc};
        break;
      case sim::pb::kModeEndSegment: return std::nullopt;
      default: return PusherError(fmt::format("command word 0x{:08X}: reserved mode {}", w, mode));
    }
  }
  if (cur.remaining != 0) {
    // The simulator drops the rest; the host's pusher may take the next entry's words for them.
    return PusherError(
        fmt::format("command for method 0x{:X} runs {} arguments past its entry's end",
                    cur.method * 4, cur.remaining));
  }
  return std::nullopt;
}

std::optional<StreamRefusal> StreamCheck::Written(uint32_t subch, uint32_t method, uint32_t value,
                                                  bool last_arg) {
  wrote_ = Wrote::kOther;
  std::optional<StreamRefusal> r = Write(subch, method, value, last_arg);
  if (wrote_ == Wrote::kOwnIncrement)
    command_increments_ = true;
  else if (wrote_ == Wrote::kOther)
    command_other_ = true;
  return r;
}

std::optional<StreamRefusal> StreamCheck::Write(uint32_t subch, uint32_t method, uint32_t value,
                                                bool last_arg) {
  if (method < sim::methods::kFirstEngineMethod) return HostMethod(subch, method, value);
  const uint32_t cls = subch_class_[subch];
  if (cls == 0) {
    return PusherError(fmt::format("method 0x{:X} on subchannel {}, which has no engine bound",
                                   method * 4, subch));
  }
  if (cls != sim::methods::kClassDma) {
    if (auto r = NotifyMethods(cls, method, value)) return r;
  }
  if (cls == kClass3D) return ThreeD(method, value, last_arg);
  // No other class has a method that moves a syncpoint; some write memory. Only the DMA and
  // inline-to-memory classes say where in the stream: a compute launch's shader, or the 2D
  // class's blit, may write wherever the space maps.
  if (cls != sim::methods::kClassI2M && cls != sim::methods::kClassDma)
    footprint_.anywhere = footprint_.waits = true;
  if (cls == sim::methods::kClassI2M || cls == sim::methods::kClassCompute ||
      cls == sim::methods::kClassDma)
    return Other(cls, method, value);
  return std::nullopt;
}

std::optional<StreamRefusal> StreamCheck::NotifyMethods(uint32_t cls, uint32_t method,
                                                        uint32_t value) {
  namespace g = sim::methods::graphics;
  if (method == Index(g::kSetNotifyA) || method == Index(g::kSetNotifyB)) {
    auto& n = notify_[cls];
    (method == Index(g::kSetNotifyA) ? n.first : n.second) = value;
  } else if (method == Index(g::kNotify)) {
    return Notify(cls, value);
  }
  return std::nullopt;
}

std::optional<StreamRefusal> StreamCheck::HostMethod(uint32_t subch, uint32_t method,
                                                     uint32_t value) {
  switch (method) {
    case Index(h::kSetObject): {
      const uint32_t cls = value & 0xFFFF;  // ENGINE_ID 20:16 is ignored, as simulated
      const abi::GpuClass* c = abi::FindGpuClass(cls);
      if (c == nullptr && cls != kClassHost) {
        return Refuse(kClassHost, h::kSetObject, value,
                      fmt::format("SET_OBJECT on subchannel {}: class 0x{:04X} is not a GM20B "
                                  "class",
                                  subch, cls));
      }
      if (c != nullptr && rules_.policy != nullptr && !rules_.policy->Allows(cls)) {
        std::string detail = fmt::format(
            "SET_OBJECT on subchannel {} binds class 0x{:04X} ({}), which the policy's "
            "channel classes do not allow",
            subch, cls, c->name);
        const bool go_on = rules_.policy->violation && rules_.policy->violation(cls, detail);
        if (!go_on) return Refuse(cls, h::kSetObject, value, std::move(detail));
      }
      subch_class_[subch] = cls;
      if (c != nullptr && rules_.policy != nullptr && rules_.policy->bound &&
          (reported_ & ClassBit(c)) == 0) {
        reported_ |= ClassBit(c);
        rules_.policy->bound(cls);
      }
      return std::nullopt;
    }
    case Index(h::kSyncpointA): wrote_ = Wrote::kSyncpointA; return std::nullopt;
    case Index(h::kSyncpointB): {
      const uint32_t id = Bits(value, h::kSyncptIndexHi, h::kSyncptIndexLo);
      const uint32_t op = value & 3;
      if (op == h::kSyncptOpBaseAdd || op == h::kSyncptOpBaseWrite) {
        return Refuse(
            kClassHost, h::kSyncpointB, value,
            fmt::format("SYNCPOINTB 0x{:08X}: wait-base operations are not allowed", value));
      }
      if (op == h::kSyncptOpIncr) return Increment(kClassHost, h::kSyncpointB, value, id);
      if (!sim::Syncpoints::ValidId(id)) {
        return Refuse(kClassHost, h::kSyncpointB, value,
                      fmt::format("SYNCPOINTB 0x{:08X}: no syncpoint {}", value, id));
      }
      // A wait on an owned syncpoint names the guest's count, which the host's value is not.
      if (rules_.owns && rules_.owns(id)) waits_on_own_ = true;
      return std::nullopt;  // a wait: reading a syncpoint moves nothing
    }
    case Index(h::kSemaphoreA): sem_a_ = value; return std::nullopt;
    case Index(h::kSemaphoreB): sem_b_ = value; return std::nullopt;
    case Index(h::kSemaphoreD): {
      const uint32_t op = value & 0x1F;
      const uint64_t va = (uint64_t{sem_a_ & 0xFF} << 32) | (sem_b_ & ~3u);
      if ((op & (h::kSemOpRelease | h::kSemOpReduction)) == 0) {  // an acquire: reads, waits
        footprint_.waits = true;
        Reads(va, SemaphoreSpan(sem_b_));
        return std::nullopt;
      }
      return Writes(kClassHost, h::kSemaphoreD, value, va, SemaphoreSpan(sem_b_));
    }
    default: return std::nullopt;
  }
}

std::optional<StreamRefusal> StreamCheck::Writes(uint32_t cls, uint32_t method_byte, uint32_t value,
                                                 uint64_t va, uint64_t size) {
  if (!rules_.reserved || !rules_.reserved(va, size)) {
    Footprint(va, size);
    return std::nullopt;
  }
  return Refuse(cls, method_byte, value,
                fmt::format("method 0x{:X} of class 0x{:04X} writes 0x{:X} bytes at 0x{:X}, "
                            "memory no stream may write",
                            method_byte, cls, size, va));
}

namespace {

// The bytes a block-linear surface of `width` bytes by `height` rows by `depth` slices, `layers`
// layers, can reach: each dimension rounded up to whole blocks (`block_size`: log2 of GOBs of 64
// bytes by 8 rows).
uint64_t SurfaceBound(uint64_t width, uint64_t height, uint64_t depth, uint64_t layers,
                      uint32_t block_size) {
  namespace b = sim::methods::block_size;
  const auto up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
  return up(width, uint64_t{64} << Bits(block_size, b::kWidthHi, b::kWidthLo)) *
         up(height, uint64_t{8} << Bits(block_size, b::kHeightHi, b::kHeightLo)) *
         up(std::max<uint64_t>(depth, 1),
            uint64_t{1} << Bits(block_size, b::kDepthHi, b::kDepthLo)) *
         (layers + 1);
}

// The bytes `lines` lines of `line` bytes each reach from `va`, `pitch` apart: PITCH_OUT is
// signed for both engines (the simulator's i2m_class.cc and dma_copy_class.cc read it so), so
// the lines may run down from `va`. A range that would run below address 0 is taken as the whole
// 40-bit space (the check then refuses it, as it meets the hidden zone).
StreamFootprint::Range PitchRange(uint64_t va, uint32_t pitch_out, uint64_t lines, uint64_t line) {
  if (lines == 0) return {va, 0};
  const int64_t span = int64_t{static_cast<int32_t>(pitch_out)} * static_cast<int64_t>(lines - 1);
  if (span >= 0) return {va, static_cast<uint64_t>(span) + line};
  const uint64_t down = static_cast<uint64_t>(-span);
  if (down > va) return {0, uint64_t{1} << 40};
  return {va - down, down + line};
}

namespace dm = sim::methods::dma;
namespace im = sim::methods::i2m;
static_assert(dm::kDstWidth == dm::kDstBlockSize + 4 && dm::kDstLayer == dm::kDstBlockSize + 16);
static_assert(dm::kSrcWidth == dm::kSrcBlockSize + 4 && dm::kSrcLayer == dm::kSrcBlockSize + 16);
static_assert(im::kDstWidth == im::kDstBlockSize + 4 && im::kDstLayer == im::kDstBlockSize + 16);

// The bytes one side of a copy reaches from `va`: `lines` lines of `line` bytes, the signed pitch
// in register `pitch` apart, when `pitch_mode`; else the block-linear surface whose BLOCK_SIZE,
// WIDTH, HEIGHT, DEPTH and LAYER registers follow one another from register `surface` (both
// engines lay them out so, asserted above), WIDTH counting `elem`-byte elements (the DMA class's
// with remapping, as the simulator's dma_block_linear.cc reads it: bounded at 16 bytes, 4
// components of 4).
StreamFootprint::Range CopySide(const std::vector<uint32_t>& regs, uint64_t va, bool pitch_mode,
                                uint32_t pitch, uint64_t lines, uint64_t line, uint32_t surface,
                                uint64_t elem) {
  if (pitch_mode) return PitchRange(va, regs[Index(pitch)], lines, line);
  const auto reg = [&](uint32_t byte) { return uint64_t{regs[Index(byte)]}; };
  return {va, SurfaceBound(reg(surface + 4) * elem, reg(surface + 8), reg(surface + 12),
                           reg(surface + 16), regs[Index(surface)])};
}

}  // namespace

std::optional<StreamRefusal> StreamCheck::Notify(uint32_t cls, uint32_t value) {
  const auto [a, b] = notify_[cls];
  const uint64_t va = (uint64_t{a & 0xFF} << 32) | b;
  return Writes(cls, sim::methods::graphics::kNotify, value, va, 16);
}

std::optional<StreamRefusal> StreamCheck::Other(uint32_t cls, uint32_t method, uint32_t value) {
  std::vector<uint32_t>& regs = regs_[cls];
  if (regs.empty()) regs.assign(kNumMethods, 0);
  SetReg(cls, regs, method, value);
  const uint32_t byte = method * 4;
  if (cls == sim::methods::kClassDma)
    return byte == sim::methods::dma::kLaunchDma ? DmaLaunch(regs, value) : std::nullopt;
  // The inline-to-memory class's data words go to its last launch's destination.
  if (byte == sim::methods::i2m::kLoadInlineData && cls == sim::methods::kClassI2M && i2m_dst_)
    Footprint(i2m_dst_->va, i2m_dst_->size);
  return byte == sim::methods::i2m::kLaunchDma ? InlineToMemory(cls, regs, value) : std::nullopt;
}

// An inline-to-memory LAUNCH_DMA (the 3D, compute and inline-to-memory classes have the same
// methods): its destination (a pitch range, or a block-linear surface) and its completion
// semaphore.
std::optional<StreamRefusal> StreamCheck::InlineToMemory(uint32_t cls,
                                                         const std::vector<uint32_t>& regs,
                                                         uint32_t value) {
  namespace m = sim::methods::i2m;
  const auto reg = [&](uint32_t byte) { return uint64_t{regs[Index(byte)]}; };
  const uint64_t va = ((reg(m::kOffsetOutUpper) & 0xFF) << 32) | reg(m::kOffsetOut);
  const uint64_t length = reg(m::kLineLengthIn), lines = reg(m::kLineCount);
  const StreamFootprint::Range dst =
      CopySide(regs, va, value & m::kDstPitch, m::kPitchOut, lines, length, m::kDstBlockSize, 1);
  // A new launch also writes out what the last one still held (a block-linear line's rest).
  if (cls == sim::methods::kClassI2M && i2m_dst_) Footprint(i2m_dst_->va, i2m_dst_->size);
  if (dst.size != 0) {
    if (auto r = Writes(cls, m::kLaunchDma, value, dst.va, dst.size)) return r;
  }
  if (cls == sim::methods::kClassI2M) i2m_dst_ = dst;
  if (Bits(value, m::kCompletionHi, m::kCompletionLo) == m::kCompletionReleaseSemaphore) {
    const uint64_t sem = ((reg(m::kSemaphoreA) & 0xFF) << 32) | (reg(m::kSemaphoreB) & ~3u);
    return Writes(cls, m::kLaunchDma, value, sem, SemaphoreSpan(regs[Index(m::kSemaphoreB)]));
  }
  return std::nullopt;
}

// The DMA class's LAUNCH_DMA: physical addressing (refused, as simulated), its destination (a pitch
// range of lines, each of LINE_LENGTH_IN elements of up to 16 bytes with remapping, or a
// block-linear surface) and its semaphore.
std::optional<StreamRefusal> StreamCheck::DmaLaunch(const std::vector<uint32_t>& regs,
                                                    uint32_t value) {
  namespace d = sim::methods::dma;
  constexpr uint32_t kDma = sim::methods::kClassDma;
  const auto reg = [&](uint32_t byte) { return uint64_t{regs[Index(byte)]}; };
  if (Bits(value, d::kTransferHi, d::kTransferLo) != 0) {
    if (value & (d::kSrcPhysical | d::kDstPhysical))
      return Refuse(kDma, d::kLaunchDma, value,
                    fmt::format("DMA LAUNCH_DMA 0x{:08X}: physical addressing", value));
    const uint64_t va = ((reg(d::kOffsetOutUpper) & 0xFF) << 32) | reg(d::kOffsetOutLower);
    const uint64_t elem = (value & d::kRemap) ? 16 : 1;
    const uint64_t line = reg(d::kLineLengthIn) * elem;
    const uint64_t lines = (value & d::kMultiLine) ? reg(d::kLineCount) : 1;
    const StreamFootprint::Range dst =
        CopySide(regs, va, value & d::kDstPitch, d::kPitchOut, lines, line, d::kDstBlockSize, elem);
    if (dst.size != 0) {
      if (auto r = Writes(kDma, d::kLaunchDma, value, dst.va, dst.size)) return r;
    }
    // The source, bounded as the destination is (16 bytes an element with remapping).
    const uint64_t src_va = ((reg(d::kOffsetInUpper) & 0xFF) << 32) | reg(d::kOffsetInLower);
    const StreamFootprint::Range src = CopySide(regs, src_va, value & d::kSrcPitch, d::kPitchIn,
                                                lines, line, d::kSrcBlockSize, elem);
    Reads(src.va, src.size);
  }
  const uint32_t sem = Bits(value, d::kSemaphoreTypeHi, d::kSemaphoreTypeLo);
  if (sem == d::kSemaphoreOneWord || sem == d::kSemaphoreFourWord) {
    const uint64_t at = ((reg(d::kSemaphoreA) & 0xFF) << 32) | (reg(d::kSemaphoreB) & ~3u);
    return Writes(kDma, d::kLaunchDma, value, at, SemaphoreSpan(regs[Index(d::kSemaphoreB)]));
  }
  return std::nullopt;
}

std::optional<StreamRefusal> StreamCheck::Increment(uint32_t cls, uint32_t method_byte,
                                                    uint32_t value, uint32_t id) {
  if (!sim::Syncpoints::ValidId(id)) {
    return Refuse(cls, method_byte, value,
                  fmt::format("method 0x{:X} of class 0x{:04X} (0x{:08X}): no syncpoint {}",
                              method_byte, cls, value, id));
  }
  if (!rules_.owns || !rules_.owns(id)) {
    return Refuse(cls, method_byte, value,
                  fmt::format("method 0x{:X} of class 0x{:04X} (0x{:08X}) increments syncpoint "
                              "{}, which is not this guest's",
                              method_byte, cls, value, id));
  }
  ++increments_[id];
  if (in_macro_)
    cuttable_ = false;  // inside the macro's own words
  else
    wrote_ = Wrote::kOwnIncrement;
  return std::nullopt;
}

// The 3D class: its registers as a macro reads them, its syncpoint increment, and its macros
// (loaded and run as the simulator's command processor runs them, threed_class.cc).
std::optional<StreamRefusal> StreamCheck::ThreeD(uint32_t method, uint32_t value, bool last_arg) {
  SetReg(kClass3D, regs3d_, method, value);
  const uint32_t byte = method * 4;
  const auto mme_error = [&](const char* what) {
    return Refuse(kClass3D, byte, value,
                  fmt::format("{} 0x{:08X}: past the end of the macro RAM", what, value));
  };
  switch (byte) {
    case t::kIncrementSyncPoint:
      return Increment(kClass3D, byte, value,
                       Bits(value, t::kSyncPointIndexHi, t::kSyncPointIndexLo));
    case t::kSetFalcon04:
      SetReg(kClass3D, regs3d_, Index(t::kMmeShadowScratch), 1);
      return std::nullopt;
    case t::kReportSemaphoreA:
    case t::kReportSemaphoreB:
    case t::kReportSemaphoreC: return std::nullopt;  // REPORT_SEMAPHORE_D's operands
    case t::kReportSemaphoreD: {
      const uint64_t va = (uint64_t{regs3d_[Index(t::kReportSemaphoreA)] & 0xFF} << 32) |
                          (regs3d_[Index(t::kReportSemaphoreB)] & ~3u);
      if ((value & 3) == t::kReportOpAcquire) {  // reads, waits
        footprint_.waits = true;
        Reads(va, SemaphoreSpan(regs3d_[Index(t::kReportSemaphoreB)]));
        return std::nullopt;
      }
      return Writes(kClass3D, byte, value, va, SemaphoreSpan(regs3d_[Index(t::kReportSemaphoreB)]));
    }
    case sim::methods::i2m::kLaunchDma: return InlineToMemory(kClass3D, regs3d_, value);
    case t::kMmeCodePointer:
      SaveMme();
      mme_.SetCodePointer(value);
      return std::nullopt;
    case t::kMmeCode:
      SaveMme();
      return mme_.LoadCode(value) ? std::nullopt : mme_error("LOAD_MME_INSTRUCTION_RAM");
    case t::kMmeStartPointer:
      SaveMme();
      mme_.SetStartPointer(value);
      return std::nullopt;
    case t::kMmeStart:
      SaveMme();
      return mme_.LoadStart(value) ? std::nullopt : mme_error("LOAD_MME_START_ADDRESS_RAM");
    default: break;
  }
  if (byte < t::kCallMmeMacro) {
    // A draw, a clear, a query...: render targets and shaders' stores are not in the stream.
    footprint_.anywhere = footprint_.waits = true;
    return std::nullopt;
  }
  // CALL_MME_MACRO(j) starts a call, CALL_MME_DATA(j) adds parameters; the command's last
  // argument runs it.
  if (in_macro_) return Refuse(kClass3D, byte, value, "a macro calling a macro");
  const uint32_t slot = method - Index(t::kCallMmeMacro);
  if (!macro_) {
    if (slot % 2 != 0)
      return Refuse(kClass3D, byte, value,
                    "CALL_MME_DATA without a CALL_MME_MACRO before it in the command");
    macro_ = slot / 2;
    params_.clear();
  }
  if (params_.size() >= uint64_t{1} << 16)
    return Refuse(kClass3D, byte, value, "a macro call with too many parameters");
  params_.push_back(value);
  if (!last_arg) return std::nullopt;
  const uint32_t macro = *macro_;
  macro_.reset();
  std::optional<StreamRefusal> sent;
  std::string error;
  uint64_t steps = 0;
  in_macro_ = true;
  const sim::MacroExpander::Outcome o =
      mme_.Run(macro, params_,
               sim::MacroExpander::Io{[&](uint32_t m, uint32_t v) {
                                        // The 3D class's methods, its NOTIFY and
                                        // SET_NOTIFY_A/B included (as from the stream).
                                        sent = NotifyMethods(kClass3D, m, v);
                                        if (!sent) sent = ThreeD(m, v, true);
                                        return !sent.has_value();
                                      },
                                      [&](uint32_t m) { return regs3d_[m]; }},
               &error, kMaxMacroSteps - steps_, &steps);
  in_macro_ = false;
  steps_ += steps;
  switch (o) {
    case sim::MacroExpander::Outcome::kDone: return std::nullopt;
    case sim::MacroExpander::Outcome::kSendStopped: return sent;
    case sim::MacroExpander::Outcome::kError: break;
  }
  return Refuse(kClass3D, t::kCallMmeMacro + 8 * macro, params_.front(), std::move(error));
}

}  // namespace nvsentry::hostshim::host
