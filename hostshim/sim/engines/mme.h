// The 3D class's macro method expander (MME): small programs a client uploads
// (LOAD_MME_INSTRUCTION_RAM, LOAD_MME_START_ADDRESS_RAM) and calls with CALL_MME_MACRO(j) and its
// parameters; a macro reads the 3D class's registers and sends method writes to it. Real clients
// run their state setup and draws through macros (deko3d: source/maxwell/*.mme), so a macro call
// is executed, and what it sends goes through the same rules as a pushbuffer's own methods.
//
// The instruction set is the Maxwell MME's as public documentation and emulators describe it
// (envytools, yuzu): 32-bit instructions; bits 2:0 the operation (ALU, add immediate, three
// bitfield forms, read, branch), 6:4 what happens to the result (move, fetch a parameter, set the
// method address, send), bit 7 exit (after one delay-slot instruction), 10:8 the destination
// register, 13:11 and 16:14 the sources, 31:14 a signed immediate, 21:17 the ALU operation, and
// for bitfields 21:17 source bit, 26:22 size, 31:27 destination bit. Eight registers; r0 reads 0;
// r1 starts with the first parameter. A branch (bit 4: taken when not zero, bit 5: no delay
// slot) is relative to itself, in instructions.
//
// Not thread-safe: one per channel, used by its command processor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"

namespace nvsentry::hostshim::sim {

class MacroExpander {
 public:
  static constexpr uint32_t kCodeWords = 1u << 16;  // instruction RAM, in words
  static constexpr uint32_t kMacros = 128;          // CALL_MME_MACRO(0..127)
  static constexpr uint64_t kMaxSteps = 1u << 20;   // per call: a macro that loops forever stops

  // LOAD_MME_INSTRUCTION_RAM_POINTER / _RAM: a word of code at the pointer, which moves on.
  void SetCodePointer(uint32_t p) { code_ptr_ = p; }
  // False when the pointer is past the instruction RAM (nothing is stored).
  bool LoadCode(uint32_t word);
  // LOAD_MME_START_ADDRESS_RAM_POINTER / _RAM: macro j's first instruction.
  void SetStartPointer(uint32_t p) { start_ptr_ = p; }
  bool LoadStart(uint32_t address);
  void Reset();

  // What a running macro does outside itself: sends a method write (false stops the macro: the
  // write was refused or faulted, and the sender says why) and reads a method register.
  struct Io {
    absl::FunctionRef<bool(uint32_t method_index, uint32_t value)> send;
    absl::FunctionRef<uint32_t(uint32_t method_index)> read;
  };
  enum class Outcome : uint8_t {
    kDone,
    kSendStopped,  // a send returned false
    kError,        // *error says what (bad macro, too many steps, too few parameters, ...)
  };
  // `max_steps` (at most kMaxSteps) bounds this call's instructions; *steps (if given) gets how
  // many ran, so that a caller can bound a whole stream's macro work.
  Outcome Run(uint32_t macro, std::span<const uint32_t> params, Io io, std::string* error,
              uint64_t max_steps = kMaxSteps, uint64_t* steps = nullptr);

 private:
  std::vector<uint32_t> code_;  // grown as code is loaded, up to kCodeWords
  std::vector<uint32_t> start_ = std::vector<uint32_t>(kMacros, 0);
  uint32_t code_ptr_ = 0, start_ptr_ = 0;
};

}  // namespace nvsentry::hostshim::sim
