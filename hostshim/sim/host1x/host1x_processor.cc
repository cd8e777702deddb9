#include "hostshim/sim/host1x/host1x_processor.h"

#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {
namespace {

// Opcodes: bits 31:28 of a command word.
enum Op : uint32_t {
  kSetClass = 0,
  kIncr = 1,
  kNonIncr = 2,
  kMask = 3,
  kImm = 4,
  kRestart = 5,
  kGather = 6,
  kExtend = 14,
};

// host1x class methods (word offsets).
constexpr uint32_t kIncrSyncpt = 0x00, kIncrSyncptCntrl = 0x01, kIncrSyncptError = 0x02,
                   kWaitSyncpt = 0x08, kWaitSyncptBase = 0x09, kLoadSyncptBase = 0x0b,
                   kIncrSyncptBase = 0x0c, kLoadSyncptPayload32 = 0x4e, kWaitSyncpt32 = 0x50;
// INCR_SYNCPT conditions: IMMEDIATE, OP_DONE, RD_DONE, REG_WR_SAFE. The engines finish every
// method when it is written, so each holds at once.
constexpr uint32_t kMaxCondition = 3;
// EXTEND sub-operations (bits 27:24).
constexpr uint32_t kAcquireMlock = 0, kReleaseMlock = 1;

constexpr uint32_t kMask24 = 0xFFFFFF;

}  // namespace

void Host1xProcessor::Start(std::vector<uint32_t> words) {
  frames_.clear();
  waiting_ = false;
  Frame f;
  f.words = std::move(words);
  frames_.push_back(std::move(f));
}

void Host1xProcessor::Reset() {
  frames_.clear();
  class_ = kHost1xClass;
  bases_.fill(0);
  payload_ = 0;
  waiting_ = false;
  method_offset_ = 0;
  tally_.Clear();
}

bool Host1xProcessor::WaitMet(Host1xEnv& env) const {
  const uint32_t value = env.ReadSyncpoint(wait_id_);
  if (wait32_) return SyncptReached(value, wait_thresh_);
  // A 24-bit threshold: compared in the low 24 bits, half the range ahead counting as not yet.
  return ((value - wait_thresh_) & kMask24) < (1u << 23);
}

void Host1xProcessor::FillWait(Host1xEnv& env, Host1xRun* r) const {
  r->stop = Host1xRun::Stop::kWait;
  r->wait_id = wait_id_;
  r->wait_thresh = wait_thresh_;
  if (!wait32_) {
    // The 32-bit value at which the 24-bit threshold is next met.
    const uint32_t v = env.ReadSyncpoint(wait_id_);
    r->wait_thresh = v + ((wait_thresh_ - v) & kMask24);
  }
}

Host1xProcessor::Write Host1xProcessor::SyncptIncr(Host1xEnv& env, uint32_t value, Host1xRun* r) {
  const uint32_t cond = (value >> 8) & 0xFF, id = value & 0xFF;
  if (cond > kMaxCondition) {
    r->error = absl::StrCat("INCR_SYNCPT with unknown condition ", cond);
    return Write::kError;
  }
  abi::NvError err = env.IncrementSyncpoint(id);
  if (err != abi::NvError::kSuccess) {
    r->error =
        absl::StrCat("INCR_SYNCPT of syncpoint ", id, " refused (",
                     err == abi::NvError::kAccessDenied ? "not the guest's" : "no such id", ")");
    return Write::kError;
  }
  return Write::kOk;
}

Host1xProcessor::Write Host1xProcessor::HostMethod(Host1xEnv& env, uint32_t method, uint32_t value,
                                                   Host1xRun* r) {
  ++host_methods_;
  tally_.Add(Host1xSpace::kHost, method);
  switch (method) {
    case kIncrSyncpt: return SyncptIncr(env, value, r);
    case kWaitSyncpt:
    case kWaitSyncptBase:
    case kWaitSyncpt32: {
      uint32_t id, thresh;
      if (method == kWaitSyncpt32) {
        id = value & 0xFF;
        thresh = payload_;
      } else {
        id = value >> 24;
        thresh = value & kMask24;
        if (method == kWaitSyncptBase) {
          const uint32_t base = (value >> 16) & 0xFF;
          if (base >= kHost1xWaitBases) {
            r->error = absl::StrCat("WAIT_SYNCPT_BASE of wait base ", base);
            return Write::kError;
          }
          thresh = (bases_[base] + (value & 0xFFFF)) & kMask24;
        }
      }
      if (!Syncpoints::ValidId(id)) {
        r->error = absl::StrCat("wait on syncpoint ", id, ", which does not exist");
        return Write::kError;
      }
      waiting_ = true;
      wait32_ = method == kWaitSyncpt32;
      wait_id_ = id;
      wait_thresh_ = thresh;
      return WaitMet(env) ? (waiting_ = false, Write::kOk) : Write::kWait;
    }
    case kLoadSyncptBase:
    case kIncrSyncptBase: {
      const uint32_t base = value >> 24;
      if (base >= kHost1xWaitBases) {
        r->error = absl::StrCat("wait base ", base, " does not exist");
        return Write::kError;
      }
      if (method == kLoadSyncptBase)
        bases_[base] = value & kMask24;
      else
        bases_[base] = (bases_[base] + (value & kMask24)) & kMask24;
      return Write::kOk;
    }
    case kLoadSyncptPayload32: payload_ = value; return Write::kOk;
    case kIncrSyncptCntrl:
    case kIncrSyncptError:
    default:
      // Control registers, DELAY_USEC, the indirect-access registers and the like: nothing
      // here depends on them.
      return Write::kOk;
  }
}

Host1xProcessor::Write Host1xProcessor::Method(Host1xEnv& env, uint32_t method, uint32_t value,
                                               Host1xRun* r) {
  method &= 0xFFF;
  if (class_ == kHost1xClass) return HostMethod(env, method, value, r);
  ++engine_methods_;
  ++engine_counts_[method];
  tally_.Add(Host1xSpace::kThi, method);
  switch (method) {
    case kThiIncrSyncpt:
      // The engine increments when the condition holds, which for an engine that does no work
      // is at once.
      return SyncptIncr(env, value, r);
    case kThiMethod0: method_offset_ = value; break;
    case kThiMethod1: {
      // METHOD0 holds a word offset; the class headers name methods by byte offset.
      const uint32_t byte_offset =
          method_offset_ < kMaxNamedEngineMethod / 4 ? method_offset_ * 4 : kMaxNamedEngineMethod;
      ++class_methods_;
      ++class_counts_[byte_offset / 4];
      tally_.Add(Host1xSpace::kEngine, byte_offset);
      break;
    }
    default: break;  // the other THI registers: nothing here depends on them
  }
  return Write::kOk;
}

uint32_t Host1xProcessor::NextDataMethod(Frame& f) {
  uint32_t m = f.offset;
  switch (f.mode) {
    case Mode::kIncr:
      ++f.offset;
      --f.count;
      break;
    case Mode::kNonIncr: --f.count; break;
    case Mode::kMask: {
      // The lowest set bit names the next method: offset + bit.
      const uint32_t bit = std::countr_zero(f.mask);
      m = f.offset + bit;
      f.mask &= f.mask - 1;
      f.count = std::popcount(f.mask);
      break;
    }
    case Mode::kNone: break;
  }
  if (f.count == 0 && !f.data_only) f.mode = Mode::kNone;
  return m;
}

bool Host1xProcessor::Opcode(Host1xEnv& env, Frame& f, uint32_t word, Host1xRun* r) {
  const uint32_t op = word >> 28;
  const uint32_t offset = (word >> 16) & 0xFFF;
  switch (op) {
    case kSetClass: {
      const uint32_t cls = (word >> 6) & 0x3FF;
      if (cls != kHost1xClass && cls != engine_class_) {
        r->error = absl::StrCat("SETCLASS 0x", absl::Hex(cls), ": not a class of this channel");
        return false;
      }
      class_ = cls;
      f.offset = offset;
      f.mask = word & 0x3F;
      f.count = std::popcount(f.mask);
      f.mode = f.count ? Mode::kMask : Mode::kNone;
      return true;
    }
    case kIncr:
    case kNonIncr:
      f.offset = offset;
      f.count = word & 0xFFFF;
      f.mode = f.count ? (op == kIncr ? Mode::kIncr : Mode::kNonIncr) : Mode::kNone;
      return true;
    case kMask:
      f.offset = offset;
      f.mask = word & 0xFFFF;
      f.count = std::popcount(f.mask);
      f.mode = f.count ? Mode::kMask : Mode::kNone;
      return true;
    case kImm: {
      Write w = Method(env, offset, word & 0xFFFF, r);
      if (w == Write::kOk) return true;
      if (w == Write::kWait) {
        r->stop = Host1xRun::Stop::kWait;
        return false;
      }
      return false;
    }
    case kRestart:
      // A jump of the channel's DMA to another address: the command buffers come from the
      // submit, so a stream may not move the fetch elsewhere.
      r->error = "RESTART inside a command buffer";
      return false;
    case kGather: {
      if (frames_.size() > 1) {
        r->error = "GATHER inside a gathered buffer";
        return false;
      }
      if (f.pos >= f.words.size()) {
        r->error = "GATHER without its address word";
        return false;
      }
      const uint32_t addr = f.words[f.pos++];
      const uint32_t count = word & 0x3FFF;
      Frame g;
      if (count && !env.Fetch(addr, count, &g.words, &r->error)) return false;
      if (word & (1u << 15)) {  // insert: the words are data for `offset`
        g.data_only = true;
        g.offset = offset;
        g.count = count;
        g.mode = (word & (1u << 14)) ? Mode::kIncr : Mode::kNonIncr;
      }
      frames_.push_back(std::move(g));
      return true;
    }
    case kExtend: {
      const uint32_t subop = (word >> 24) & 0xF, id = word & 0xFFFFFF;
      if ((subop != kAcquireMlock && subop != kReleaseMlock) || id >= kHost1xMlocks) {
        r->error = absl::StrCat("EXTEND sub-operation ", subop, " on module lock ", id);
        return false;
      }
      // Module locks order the channels' access to one engine; this channel's stream runs
      // alone on its engine, so acquiring one never has to wait.
      return true;
    }
    default:
      r->error = absl::StrCat("unknown host1x opcode ", op, " (word 0x", absl::Hex(word), ")");
      return false;
  }
}

Host1xRun Host1xProcessor::Run(Host1xEnv& env, uint32_t budget) {
  Host1xRun r;
  if (waiting_) {
    if (!WaitMet(env)) {
      FillWait(env, &r);
      return r;
    }
    waiting_ = false;
  }
  while (!frames_.empty()) {
    Frame& f = frames_.back();
    if (f.pos >= f.words.size()) {
      frames_.pop_back();
      continue;
    }
    if (budget-- == 0) {
      r.stop = Host1xRun::Stop::kYield;
      return r;
    }
    const uint32_t word = f.words[f.pos++];
    bool ok = true;
    if (f.mode != Mode::kNone) {
      Write w = Method(env, NextDataMethod(f), word, &r);
      if (w == Write::kWait) {
        r.stop = Host1xRun::Stop::kWait;
        ok = false;
      } else if (w == Write::kError) {
        ok = false;
      }
    } else {
      ok = Opcode(env, f, word, &r);
    }
    if (ok) continue;
    if (r.stop == Host1xRun::Stop::kWait) {
      FillWait(env, &r);
      return r;
    }
    r.stop = Host1xRun::Stop::kError;
    frames_.clear();
    return r;
  }
  r.stop = Host1xRun::Stop::kDone;
  return r;
}

}  // namespace nvsentry::hostshim::sim
