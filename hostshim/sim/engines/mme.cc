#include "hostshim/sim/engines/mme.h"

#include <algorithm>
#include <optional>

#include "spdlog/fmt/fmt.h"

namespace nvsentry::hostshim::sim {

namespace {

uint32_t Field(uint32_t v, unsigned hi, unsigned lo) {
  return (v >> lo) & ((1u << (hi - lo + 1)) - 1);
}
// Shifts by 32 or more give 0, as a 32-bit datapath would (C++ leaves them undefined).
uint32_t Shr(uint32_t v, uint32_t s) { return s >= 32 ? 0 : v >> s; }
uint32_t Shl(uint32_t v, uint32_t s) { return s >= 32 ? 0 : v << s; }

enum Operation : uint32_t {
  kAlu = 0,
  kAddImmediate = 1,
  kExtractInsert = 2,
  kExtractShiftLeftImmediate = 3,
  kExtractShiftLeftRegister = 4,
  kRead = 5,
  kBranch = 7,
};
enum ResultOp : uint32_t {
  kIgnoreAndFetch = 0,
  kMove = 1,
  kMoveAndSetMethod = 2,
  kFetchAndSend = 3,
  kMoveAndSend = 4,
  kFetchAndSetMethod = 5,
  kMoveAndSetMethodFetchAndSend = 6,
  kMoveAndSetMethodSend = 7,
};

}  // namespace

bool MacroExpander::LoadCode(uint32_t word) {
  if (code_ptr_ >= kCodeWords) return false;
  if (code_ptr_ >= code_.size()) code_.resize(code_ptr_ + 1, 0);
  code_[code_ptr_++] = word;
  return true;
}

bool MacroExpander::LoadStart(uint32_t address) {
  if (start_ptr_ >= kMacros) return false;
  start_[start_ptr_++] = address;
  return true;
}

void MacroExpander::Reset() {
  code_.clear();
  start_.assign(kMacros, 0);
  code_ptr_ = start_ptr_ = 0;
}

MacroExpander::Outcome MacroExpander::Run(uint32_t macro, std::span<const uint32_t> params, Io io,
                                          std::string* error, uint64_t max_steps,
                                          uint64_t* steps_run) {
  max_steps = std::min(max_steps, kMaxSteps);
  auto fail = [&](std::string what) {
    *error = fmt::format("macro {}: {}", macro, what);
    return Outcome::kError;
  };
  if (macro >= kMacros || params.empty()) return fail("no such call");
  uint32_t r[8] = {};
  r[1] = params[0];
  size_t next_param = 1;
  bool carry = false;
  uint32_t method = 0, increment = 0;  // where the next send goes, and how far it moves
  uint32_t pc = start_[macro];
  bool delay_next = false, stop_after_slot = false;
  std::optional<uint32_t> jump_after_slot;
  bool fetch_failed = false, send_stopped = false;

  auto fetch = [&]() -> uint32_t {
    if (next_param >= params.size()) {
      fetch_failed = true;
      return 0;
    }
    return params[next_param++];
  };
  auto set = [&](uint32_t reg, uint32_t v) {
    if (reg != 0) r[reg] = v;  // r0 is always 0
  };
  auto send = [&](uint32_t v) {
    if (!send_stopped && !io.send(method, v)) send_stopped = true;
    method = (method + increment) & 0xFFF;
  };
  auto set_method = [&](uint32_t v) {
    method = v & 0xFFF;
    increment = Field(v, 17, 12);
  };

  uint64_t steps = 0;
  struct Count {  // *steps_run on every way out
    uint64_t* out;
    const uint64_t& n;
    ~Count() {
      if (out != nullptr) *out = n;
    }
  } count{steps_run, steps};
  for (;; ++steps) {
    if (steps >= max_steps)
      return fail(fmt::format("ran {} instructions without exiting", max_steps));
    const bool in_slot = delay_next;
    delay_next = false;
    if (pc >= code_.size()) return fail(fmt::format("ran past its code (instruction {})", pc));
    const uint32_t ins = code_[pc];
    const uint32_t here = pc++;
    const uint32_t op = Field(ins, 2, 0);
    const uint32_t dst = Field(ins, 10, 8), a = r[Field(ins, 13, 11)], b = r[Field(ins, 16, 14)];
    const int32_t imm = static_cast<int32_t>(ins) >> 14;
    const uint32_t size = Field(ins, 26, 22), src_bit = Field(ins, 21, 17),
                   dst_bit = Field(ins, 31, 27);
    const uint32_t mask = size >= 32 ? 0xFFFFFFFFu : (1u << size) - 1;
    bool taken = false;
    if (op == kBranch) {
      if (in_slot) return fail(fmt::format("a branch in a delay slot (instruction {})", here));
      taken = (Field(ins, 4, 4) != 0) == (a != 0);
      if (taken) {
        const uint32_t target = here + static_cast<uint32_t>(imm);
        if (Field(ins, 5, 5) != 0) {
          pc = target;  // no delay slot
        } else {
          delay_next = true;
          jump_after_slot = target;
        }
      }
    } else {
      uint32_t result = 0;
      switch (op) {
        case kAlu: {
          const uint64_t wa = a, wb = b;
          switch (Field(ins, 21, 17)) {
            case 0:
              result = static_cast<uint32_t>(wa + wb);
              carry = ((wa + wb) >> 32) != 0;
              break;
            case 1: {
              const uint64_t s = wa + wb + (carry ? 1 : 0);
              result = static_cast<uint32_t>(s);
              carry = (s >> 32) != 0;
              break;
            }
            case 2:
              result = a - b;
              carry = a >= b;
              break;  // carry: no borrow
            case 3: {
              const uint64_t d = wa - wb - (carry ? 0 : 1);
              result = static_cast<uint32_t>(d);
              carry = d < (uint64_t{1} << 32);
              break;
            }
            case 8: result = a ^ b; break;
            case 9: result = a | b; break;
            case 10: result = a & b; break;
            case 11: result = a & ~b; break;
            case 12: result = ~(a & b); break;
            default:
              return fail(
                  fmt::format("ALU operation {} (instruction {})", Field(ins, 21, 17), here));
          }
          break;
        }
        case kAddImmediate: result = a + static_cast<uint32_t>(imm); break;
        case kExtractInsert:
          result = (a & ~Shl(mask, dst_bit)) | Shl(Shr(b, src_bit) & mask, dst_bit);
          break;
        case kExtractShiftLeftImmediate: result = Shl(Shr(b, a) & mask, dst_bit); break;
        case kExtractShiftLeftRegister: result = Shl(Shr(b, src_bit) & mask, a); break;
        case kRead: result = io.read((a + static_cast<uint32_t>(imm)) & 0xFFF); break;
        default: return fail(fmt::format("operation {} (instruction {})", op, here));
      }
      switch (Field(ins, 6, 4)) {
        case kIgnoreAndFetch: set(dst, fetch()); break;
        case kMove: set(dst, result); break;
        case kMoveAndSetMethod:
          set(dst, result);
          set_method(result);
          break;
        case kFetchAndSend:
          set(dst, fetch());
          send(result);
          break;
        case kMoveAndSend:
          set(dst, result);
          send(result);
          break;
        case kFetchAndSetMethod:
          set(dst, fetch());
          set_method(result);
          break;
        case kMoveAndSetMethodFetchAndSend:
          set(dst, result);
          set_method(result);
          send(fetch());
          break;
        case kMoveAndSetMethodSend:
          set(dst, result);
          set_method(result);
          send(Field(result, 17, 12));
          break;
      }
    }
    if (send_stopped) return Outcome::kSendStopped;
    if (fetch_failed)
      return fail(fmt::format("fetched more parameters than the {} it was given", params.size()));
    // Exit takes effect after one more instruction; an exit in a delay slot does not exit.
    if (Field(ins, 7, 7) != 0 && !in_slot && !taken) {
      delay_next = true;
      stop_after_slot = true;
    }
    if (in_slot) {
      if (jump_after_slot) pc = *jump_after_slot;
      jump_after_slot.reset();
      if (stop_after_slot) return Outcome::kDone;
    }
  }
}

}  // namespace nvsentry::hostshim::sim
