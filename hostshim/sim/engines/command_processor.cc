// The pusher: GPFIFO entry -> pushbuffer chunks fetched through the channel's GpuMemory ->
// command words -> method writes routed to the host class or the subchannel's engine. The
// engines live in host_class.cc, threed_class.cc, i2m_class.cc and dma_copy_class.cc.
#include "hostshim/sim/engines/command_processor.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/cp_state.h"
#include "hostshim/sim/engines/pushbuffer.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {

namespace {

using methods::Index;
using methods::kFirstEngineMethod;
using methods::kNumMethods;

// Pushbuffer words fetched per GpuMemory::Read: large enough to amortise the translation,
// small enough that a segment of 2^21 words does not need an 8 MiB buffer.
constexpr size_t kChunkWords = 16384;

// What a command word's mode means for the fast path, as numbers rather than branches.
struct ModeShape {
  uint8_t fast;  // handled by the fast path at all
  uint8_t args;  // 1: `count` argument words follow (0: immediate, the data is in the word)
  uint8_t span;  // 1: the writes go to `count` consecutive methods (0: all to one method)
};
constexpr ModeShape kModeShapes[8] = {
    {0, 0, 0}, {1, 1, 1} /*inc*/, {0, 0, 0}, {1, 1, 0} /*non-inc*/, {1, 0, 0} /*immediate*/,
    {0, 0, 0}, {0, 0, 0},         {0, 0, 0}};

constexpr uint32_t kClassOf[kNumKinds] = {0,
                                          methods::kClassHost,
                                          methods::kClass2D,
                                          methods::kClass3D,
                                          methods::kClassCompute,
                                          methods::kClassI2M,
                                          methods::kClassDma};

struct Tables {
  std::array<std::array<uint8_t, kNumMethods>, kNumKinds> kind{};
  // prefix[k][mk][i]: methods of kind mk among [0, i).
  std::array<std::array<std::array<uint16_t, kNumMethods + 1>, 3>, kNumKinds> prefix{};
  // The fast path's two counts in one word: triggers << 16 | unmodelled, among [0, i). Both
  // only grow with i, so one subtraction gives both differences without a borrow.
  std::array<std::array<uint32_t, kNumMethods + 1>, kNumKinds> packed{};

  Tables() {
    ClassifyMethods(&kind);
    for (int k = 0; k < kNumKinds; ++k) {
      for (int mk = 0; mk < 3; ++mk) {
        uint16_t n = 0;
        for (uint32_t i = 0; i < kNumMethods; ++i) {
          prefix[k][mk][i] = n;
          // The trigger count covers refusals too: both leave the bulk paths.
          if (kind[k][i] == mk || (mk == kTrigger && kind[k][i] == kRefused)) ++n;
        }
        prefix[k][mk][kNumMethods] = n;
      }
      for (uint32_t i = 0; i <= kNumMethods; ++i) {
        packed[k][i] = (uint32_t{prefix[k][kTrigger][i]} << 16) | prefix[k][kUnmodelled][i];
      }
    }
  }
};

uint64_t Fingerprint(const uint32_t* words, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;  // FNV-1a over the words
  for (uint64_t i = 0; i < n; ++i) h = (h ^ words[i]) * 0x100000001b3ull;
  return h;
}

const Tables& T() {
  static const Tables* t = new Tables();
  return *t;
}

bool WriteMem(GpuMemory* mem, uint64_t va, const void* data, size_t n, MmuFault* f) {
  if (mem == nullptr) {
    *f = MmuFault{MmuFault::Kind::kUnmapped, va, true};
    return false;
  }
  return mem->Write(va, std::span(static_cast<const uint8_t*>(data), n), f);
}

}  // namespace

const std::array<uint8_t, kNumMethods>& MethodTable(EngineKind k) { return T().kind[k]; }
uint32_t ClassOf(EngineKind k) { return k < kNumKinds ? kClassOf[k] : 0; }
uint16_t MethodPrefix(EngineKind k, MethodKind mk, uint32_t i) { return T().prefix[k][mk][i]; }

CommandProcessor::State::State(ChannelEnv e)
    : env(std::move(e)),
      regs(std::make_unique<std::array<std::array<uint32_t, kNumMethods>, kNumKinds>>()) {
  for (auto& r : *regs) r.fill(0);
  fetch.reserve(kChunkWords);
}

CommandProcessor::CommandProcessor(ChannelEnv env)
    : state_(std::make_unique<State>(std::move(env))) {}
CommandProcessor::~CommandProcessor() = default;

const CommandStats& CommandProcessor::stats() const { return state_->stats; }

void CommandProcessor::Reset() {
  State& s = *state_;
  s.subch_kind.fill(kNone);
  s.subch_class.fill(0);
  s.cur = PbCursor{};
  s.pending[0] = s.pending[1] = State::Pending{};
  for (auto& r : *s.regs) r.fill(0);
  for (auto& p : s.i2m) p = I2mProgress{};
  s.mme.Reset();
  s.mme_pending = false;
  s.mme_params.clear();
}

RunResult CommandProcessor::Run(const abi::channel::GpfifoEntry& entry) {
  uint64_t key = (static_cast<uint64_t>(entry.entry1) << 32) | entry.entry0;
  uint32_t length = pb::EntryLength(entry.entry1);
  if (length == 0) {
    state_->result = RunResult{};
    state_->Error("zero-length GPFIFO entry (pusher error)");
    return state_->result;
  }
  return state_->RunSegment(nullptr, length, pb::EntryVa(entry.entry0, entry.entry1), true, key,
                            false);
}

RunResult CommandProcessor::Run(const abi::channel::GpfifoEntry& entry,
                                std::span<const uint32_t> words) {
  const uint32_t length = pb::EntryLength(entry.entry1);
  if (length == 0 || words.size() != length) return Run(entry);
  const uint64_t key = (static_cast<uint64_t>(entry.entry1) << 32) | entry.entry0;
  return state_->RunSegment(words.data(), length, pb::EntryVa(entry.entry0, entry.entry1), false,
                            key, false);
}

RunResult CommandProcessor::RunWords(std::span<const uint32_t> words) {
  return state_->RunSegment(words.data(), words.size(), 0, false, words.size(), true);
}

RunResult CommandProcessor::State::RunSegment(const uint32_t* words, uint64_t length, uint64_t va,
                                              bool fetch_words, uint64_t key, bool from_words) {
  result = RunResult{};
  log_debug = spdlog::should_log(spdlog::level::debug);
  uint64_t pos = 0;
  // A wait in an entry and one in words the channel runs itself are kept apart: running the
  // one does not forget the other. Words in sentry memory are recognised by their contents
  // (hashed only when a wait is pending or was just saved), entries by address and length.
  Pending& p = pending[from_words ? 1 : 0];
  if (from_words && p.active) key = Fingerprint(words, length);
  if (p.active && p.key == key) {
    pos = p.pos;
    cur = p.cursor;
  } else {
    if (p.active) {
      SPDLOG_DEBUG("sim gpu: a waiting segment was replaced by another before it resumed");
    }
    cur = PbCursor{};
    ++stats.entries;
  }
  p = Pending{false, key, 0, PbCursor{}};
  current = &p;

  while (pos < length) {
    const uint32_t* chunk;
    size_t n;
    if (fetch_words) {
      n = static_cast<size_t>(std::min<uint64_t>(kChunkWords, length - pos));
      fetch.resize(n);
      MmuFault f;
      uint64_t at = va + pos * 4;
      if (env.memory == nullptr) {
        f = MmuFault{MmuFault::Kind::kUnmapped, at, false};
        Fault(f);
        return result;
      }
      if (!env.memory->Read(at, std::span(reinterpret_cast<uint8_t*>(fetch.data()), n * 4), &f)) {
        Fault(f);
        return result;
      }
      chunk = fetch.data();
    } else {
      chunk = words + pos;
      n = static_cast<size_t>(length - pos);
    }
    stats.words += n;
    bool end = false;
    if (!Execute(chunk, n, pos, &end)) {
      if (p.active && from_words) p.key = Fingerprint(words, length);
      return result;
    }
    if (end) break;
    pos += n;
  }
  mme_pending = false;  // a macro call whose command ran past the segment never runs
  if (cur.remaining != 0) {
    ++stats.truncated_commands;
    SPDLOG_DEBUG("sim gpu: command for method 0x{:X} lost {} arguments past its segment's end",
                 cur.method * 4, cur.remaining);
  }
  cur = PbCursor{};
  result.stop = RunResult::Stop::kDone;
  return result;
}

bool CommandProcessor::State::Execute(const uint32_t* words, size_t n, uint64_t base, bool* end) {
  // Debug logging of unmodelled methods goes the slow way.
  const bool fast = !log_debug;
  size_t i = 0;
  while (i < n) {
    if (fast && cur.remaining == 0) {
      i = FastRun(words, n, i);
      if (i == n) break;
    }
    switch (Step(words, n, base, &i)) {
      case StepResult::kContinue: break;
      case StepResult::kEnd: *end = true; return true;
      case StepResult::kStopped: return false;
    }
  }
  return true;
}

// The fast path: whole commands (header and arguments in this chunk) in the modes 1, 3 and 4 to
// engine methods that only store a register or are not modelled. No call, no per-argument work
// unless a modelled register is in range. Returns the index of the first word it left.
size_t CommandProcessor::State::FastRun(const uint32_t* words, size_t n, size_t i) {
  const Tables& t = T();
  auto& r = *regs;
  // One counter in the common case; the unmodelled writes are the others.
  uint64_t writes_total = 0, modelled = 0;
  while (i < n) {
    // Real pushbuffers mix modes unpredictably: the mode selects numbers (kModeShapes, masks)
    // instead of branches, and where the next command starts (the loop's critical path) is a
    // mask of the word itself: bit 29, the mode's low bit, is set for the modes with arguments
    // (1, 3) and clear for immediates (4).
    uint32_t w = words[i];
    uint32_t count = pb::WordCount(w);
    uint32_t args = count & static_cast<uint32_t>(static_cast<int32_t>(w << 2) >> 31);
    uint32_t mode = pb::WordMode(w);
    uint32_t m = pb::WordMethod(w);
    uint32_t k = subch_kind[pb::WordSubchannel(w)];
    const ModeShape& sh = kModeShapes[mode];
    uint32_t span = count * sh.span + (1 - sh.span);    // distinct methods written
    uint32_t writes = count * sh.args + (1 - sh.args);  // method writes
    bool ok = sh.fast & (m >= kFirstEngineMethod) & (k != kNone) & (writes != 0) & (args < n - i) &
              (m + span <= kNumMethods);
    if (!ok) break;
    const auto& pk = t.packed[k];
    uint32_t diff = pk[m + span] - pk[m];
    if ((diff >> 16) != 0) break;  // a trigger in range
    uint32_t unmodelled = diff;
    if (unmodelled != span) [[unlikely]] {  // a modelled register: store the values
      if (mode == pb::kModeInc) {
        std::memcpy(&r[k][m], words + i + 1, count * sizeof(uint32_t));
        modelled += span - unmodelled;
      } else {
        r[k][m] = mode == pb::kModeImmediate ? count : words[i + count];
        modelled += writes;
      }
    }
    writes_total += writes;
    i += 1 + args;
  }
  stats.methods += writes_total;
  stats.unmodelled += writes_total - modelled;
  return i;
}

// One command header, or the arguments of the current command that are in this chunk, the
// general way. Out of line so that the fast loop keeps its values in registers.
[[gnu::noinline]] CommandProcessor::State::StepResult CommandProcessor::State::Step(
    const uint32_t* words, size_t n, uint64_t base, size_t* at) {
  size_t i = *at;
  if (cur.remaining == 0) {
    uint32_t w = words[i];
    uint32_t mode = pb::WordMode(w);
    switch (mode) {
      case pb::kModeInc:
      case pb::kModeNonInc:
      case pb::kModeIncOnce:
        cur = PbCursor{pb::WordMethod(w), pb::WordCount(w),
                       static_cast<uint8_t>(pb::WordSubchannel(w)), static_cast<uint8_t>(mode)};
        break;
      case pb::kModeImmediate:
        last_arg = true;
        if (Write(pb::WordSubchannel(w), pb::WordMethod(w), pb::WordImmediate(w)) == Exec::kStop) {
          SaveWait(base + i);
          return StepResult::kStopped;
        }
        break;
      case pb::kModeLegacyInc:
        // Word 0 is the NOP; tertiary ops 1..3 set subdevice masks, which a single GPU ignores.
        if (w != 0 && pb::LegacyTertOp(w) == 0) {
          cur = PbCursor{pb::LegacyMethod(w), pb::LegacyCount(w),
                         static_cast<uint8_t>(pb::WordSubchannel(w)), pb::kModeInc};
        }
        break;
      case pb::kModeLegacyNonInc:
        if (pb::LegacyTertOp(w) != 0) {
          Error(fmt::format("command word 0x{:08X}: reserved tertiary operation", w));
          return StepResult::kStopped;
        }
        cur = PbCursor{pb::LegacyMethod(w), pb::LegacyCount(w),
                       static_cast<uint8_t>(pb::WordSubchannel(w)), pb::kModeNonInc};
        break;
      case pb::kModeEndSegment: return StepResult::kEnd;
      default:
        Error(fmt::format("command word 0x{:08X}: reserved mode {}", w, mode));
        return StepResult::kStopped;
    }
    *at = i + 1;
    return StepResult::kContinue;
  }
  size_t avail = static_cast<size_t>(std::min<uint64_t>(cur.remaining, n - i));
  bool stopped = false;
  i += Arguments(words + i, avail, &stopped);
  *at = i;
  if (stopped) {
    SaveWait(base + i);
    return StepResult::kStopped;
  }
  return StepResult::kContinue;
}

size_t CommandProcessor::State::Arguments(const uint32_t* args, size_t n, bool* stopped) {
  uint32_t m = cur.method;
  EngineKind k = static_cast<EngineKind>(subch_kind[cur.subch]);
  // Bulk paths for engine methods that only store a register: O(1) per command.
  if (m >= kFirstEngineMethod && k != kNone) {
    const Tables& t = T();
    auto& r = (*regs)[k];
    if (cur.mode == pb::kModeNonInc) {
      uint8_t mk = t.kind[k][m];
      if (mk < kTrigger) {
        r[m] = args[n - 1];
        stats.methods += n;
        if (mk == kUnmodelled) {
          stats.unmodelled += n;
          if (log_debug) LogOnce(k, m, args[n - 1]);
        }
        cur.remaining -= n;
        return n;
      }
      if (m == Index(methods::i2m::kLoadInlineData) && mk == kTrigger) {
        size_t took = I2mData(k, args, n, stopped);
        stats.methods += took;
        cur.remaining -= took;
        return took;
      }
      if (k == k3D && m >= Index(methods::threed::kLoadCb) &&
          m < Index(methods::threed::kLoadCb) + methods::threed::kLoadCbCount) {
        if (CbData(args, n) == Exec::kStop) {
          *stopped = true;
          return 0;
        }
        r[m] = args[n - 1];
        stats.methods += n;
        cur.remaining -= n;
        return n;
      }
    } else if (cur.mode == pb::kModeInc && m + n <= kNumMethods &&
               t.prefix[k][kTrigger][m + n] == t.prefix[k][kTrigger][m]) {
      std::memcpy(&r[m], args, n * sizeof(uint32_t));
      uint32_t unmodelled = t.prefix[k][kUnmodelled][m + n] - t.prefix[k][kUnmodelled][m];
      stats.unmodelled += unmodelled;
      stats.methods += n;
      if (unmodelled != 0 && log_debug) {
        for (size_t j = 0; j < n; ++j) {
          if (t.kind[k][m + j] == kUnmodelled) LogOnce(k, static_cast<uint32_t>(m + j), args[j]);
        }
      }
      cur.method += n;
      cur.remaining -= n;
      return n;
    }
  }
  // One write at a time: host methods, triggers, and increment-once's first argument (after
  // which the command is non-incrementing and the caller comes back for the bulk path).
  size_t done = 0;
  while (done < n) {
    last_arg = cur.remaining == 1;
    if (Write(cur.subch, cur.method, args[done]) == Exec::kStop) {
      *stopped = true;
      return done;
    }
    ++done;
    --cur.remaining;
    if (cur.mode == pb::kModeInc) {
      cur.method = (cur.method + 1) & (kNumMethods - 1);
    } else if (cur.mode == pb::kModeIncOnce) {
      cur.method = (cur.method + 1) & (kNumMethods - 1);
      cur.mode = pb::kModeNonInc;
      break;
    }
  }
  return done;
}

Exec CommandProcessor::State::Write(uint32_t subch, uint32_t method, uint32_t value) {
  if (method < kFirstEngineMethod) {
    Exec e = HostMethod(subch, method, value);
    if (e == Exec::kOk) ++stats.methods;
    return e;
  }
  EngineKind k = static_cast<EngineKind>(subch_kind[subch]);
  if (k == kNone) {
    return Error(fmt::format("method 0x{:X} on subchannel {}, which has no engine bound",
                             method * 4, subch));
  }
  return EngineWrite(k, method, value);
}

Exec CommandProcessor::State::EngineWrite(EngineKind k, uint32_t method, uint32_t value) {
  (*regs)[k][method] = value;
  at_class = kClassOf[k];
  at_method = method * 4;
  at_value = value;
  Exec e;
  switch (T().kind[k][method]) {
    case kUnmodelled: e = Unmodelled(k, method, value); break;
    case kRegister: e = Exec::kOk; break;
    case kRefused: e = Refuse(k, method, value); break;
    default: e = Trigger(k, method, value); break;
  }
  if (e == Exec::kOk) ++stats.methods;
  return e;
}

Exec CommandProcessor::State::Trigger(EngineKind k, uint32_t method, uint32_t value) {
  if (k == kDma) return DmaTrigger(method, value);
  if (method == Index(methods::graphics::kNotify)) return Notify(k, value);
  if ((k == k3D || k == kCompute) && method == Index(methods::threed::kReportSemaphoreD)) {
    return ReportTrigger(k, method, value);
  }
  if (method == Index(methods::i2m::kLaunchDma) || method == Index(methods::i2m::kLoadInlineData)) {
    return I2mTrigger(k, method, value);
  }
  return ThreeDTrigger(method, value);  // the table marks no other class's methods as triggers
}

Exec CommandProcessor::State::Unmodelled(EngineKind k, uint32_t method, uint32_t value) {
  ++stats.unmodelled;
  if (log_debug) LogOnce(k, method, value);
  return Exec::kOk;
}

void CommandProcessor::State::LogOnce(EngineKind k, uint32_t method, uint32_t value) {
  if (!logged[k][method]) {
    logged[k].set(method);
    NVS_LOG_LIMITED(spdlog::level::debug,
                    "sim gpu: class 0x{:04X} method 0x{:04X} (value 0x{:08X}) is not modelled",
                    kClassOf[k], method * 4, value);
  }
}

Exec CommandProcessor::State::Error(std::string message) {
  result.stop = RunResult::Stop::kError;
  NVS_LOG_LIMITED(spdlog::level::debug, "sim gpu: channel error: {}", message);
  result.error = std::move(message);
  return Exec::kStop;
}

Exec CommandProcessor::State::MethodError(uint32_t cls, uint32_t method_byte, uint32_t value,
                                          std::string message) {
  result.error_class = cls;
  result.error_method = method_byte;
  result.error_value = value;
  return Error(std::move(message));
}

Exec CommandProcessor::State::IncrementSyncpoint(uint32_t cls, uint32_t method_byte, uint32_t value,
                                                 uint32_t id) {
  if (env.syncpoints == nullptr) {
    return MethodError(
        cls, method_byte, value,
        fmt::format("method 0x{:X} of class 0x{:04X}: no syncpoints", method_byte, cls));
  }
  switch (env.syncpoints->IncrementFromCommandStream(id)) {
    case abi::NvError::kSuccess: ++stats.syncpoint_incrs; return Exec::kOk;
    case abi::NvError::kAccessDenied:
      return MethodError(
          cls, method_byte, value,
          fmt::format("method 0x{:X} of class 0x{:04X} (0x{:08X}) increments syncpoint "
                      "{}, which is not this guest's",
                      method_byte, cls, value, id));
    default:
      return MethodError(cls, method_byte, value,
                         fmt::format("method 0x{:X} of class 0x{:04X} (0x{:08X}): no syncpoint {}",
                                     method_byte, cls, value, id));
  }
}

Exec CommandProcessor::State::Acquire(bool met, uint64_t va, uint32_t payload) {
  if (met) {
    ++stats.semaphore_acquires;
    return Exec::kOk;
  }
  result.stop = RunResult::Stop::kWaitSemaphore;
  result.va = va;
  result.threshold = payload;
  return Exec::kStop;
}

Exec CommandProcessor::State::Fault(const MmuFault& f) {
  result.stop = RunResult::Stop::kFault;
  result.fault = f;
  return Exec::kStop;
}

void CommandProcessor::State::SaveWait(uint64_t pos) {
  if (result.stop != RunResult::Stop::kWaitSyncpoint &&
      result.stop != RunResult::Stop::kWaitSemaphore) {
    return;
  }
  current->active = true;
  current->pos = pos;
  current->cursor = cur;  // the key was set when the segment started
}

uint64_t CommandProcessor::State::Now() {
  if (env.gpu_time_ns) return env.gpu_time_ns();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void CommandProcessor::State::Interrupt() {
  ++stats.nonstall_interrupts;
  if (env.nonstall_interrupt) env.nonstall_interrupt();
}

Exec CommandProcessor::State::Release(uint64_t va, uint32_t payload, bool four_bytes) {
  MmuFault f;
  if (four_bytes) {
    if (!WriteMem(env.memory, va, &payload, 4, &f)) return Fault(f);
    return Exec::kOk;
  }
  uint8_t buf[16];
  uint32_t zero = 0;
  uint64_t ts = Now();
  std::memcpy(buf, &payload, 4);
  std::memcpy(buf + 4, &zero, 4);
  std::memcpy(buf + 8, &ts, 8);
  if (!WriteMem(env.memory, va, buf, 16, &f)) return Fault(f);
  return Exec::kOk;
}

Exec CommandProcessor::State::Release64(uint64_t va, uint64_t value) {
  uint8_t buf[16];
  uint64_t ts = Now();
  std::memcpy(buf, &value, 8);
  std::memcpy(buf + 8, &ts, 8);
  MmuFault f;
  if (!WriteMem(env.memory, va, buf, 16, &f)) return Fault(f);
  return Exec::kOk;
}

Exec CommandProcessor::State::Reduce(uint64_t va, methods::Reduction op, bool is_signed,
                                     uint32_t payload) {
  MmuFault f;
  uint32_t v = 0;
  if (env.memory == nullptr) return Fault(MmuFault{MmuFault::Kind::kUnmapped, va, false});
  if (!env.memory->Read(va, std::span(reinterpret_cast<uint8_t*>(&v), 4), &f)) return Fault(f);
  auto s = [](uint32_t x) { return static_cast<int32_t>(x); };
  using R = methods::Reduction;
  switch (op) {
    case R::kMin: v = is_signed ? (s(payload) < s(v) ? payload : v) : std::min(v, payload); break;
    case R::kMax: v = is_signed ? (s(payload) > s(v) ? payload : v) : std::max(v, payload); break;
    case R::kXor: v ^= payload; break;
    case R::kAnd: v &= payload; break;
    case R::kOr: v |= payload; break;
    case R::kAdd: v += payload; break;
    case R::kInc: v = v >= payload ? 0 : v + 1; break;  // wraps to 0 past the payload
    case R::kDec: v = (v == 0 || v > payload) ? payload : v - 1; break;
    default:  // FADD and reserved codes: the memory would change in a way not simulated
      return MethodError(at_class, at_method, at_value,
                         fmt::format("semaphore reduction {} at 0x{:X} is not simulated",
                                     static_cast<uint32_t>(op), va));
  }
  if (!WriteMem(env.memory, va, &v, 4, &f)) return Fault(f);
  return Exec::kOk;
}

}  // namespace nvsentry::hostshim::sim
