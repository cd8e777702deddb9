// The host1x command processor of one engine channel: decodes a host1x command stream (the
// opcodes SETCLASS, INCR, NONINCR, MASK, IMM, RESTART, GATHER, EXTEND) and executes the host1x
// class's methods (syncpoint increments with their conditions, syncpoint waits, the wait bases).
// The engine's own class (VIC, NVDEC, ...) is not executed: its host interface's INCR_SYNCPT
// (register 0, which every host1x client class has) increments, and the engine methods a stream
// writes through METHOD0 (the method's word offset) and METHOD1 (its data) are counted by name
// (host1x_methods.h), in total and per job. docs/simulated-gpu.md lists the encodings and where
// they come from.
//
// It is resumable and never sleeps: Run() goes until the stream ends (kDone), a syncpoint wait is
// not met yet (kWait: call Run() again once it may be), the step budget is spent (kYield), or the
// stream is malformed (kError, with why; the channel then stops). Everything it reaches outside
// itself (gathered memory, syncpoints) goes through Host1xEnv.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "abi/nverror.h"
#include "hostshim/sim/host1x/host1x_methods.h"

namespace nvsentry::hostshim::sim {

inline constexpr uint32_t kHost1xClass = 0x01;
inline constexpr uint32_t kHost1xWaitBases = 64;  // Tegra210 (Linux host1x05_info)
inline constexpr uint32_t kHost1xMlocks = 16;     // Tegra210 (Linux host1x05_info)
// Most words one GATHER fetches: its count field is 14 bits.
inline constexpr uint32_t kMaxGatherWords = (1u << 14) - 1;

class Host1xEnv {
 public:
  virtual ~Host1xEnv() = default;
  // GATHER: the `words` words at device address `addr`; false with *why when they are not all
  // inside one mapped buffer or cannot be read.
  virtual bool Fetch(uint32_t addr, uint32_t words, std::vector<uint32_t>* out,
                     std::string* why) = 0;
  // A syncpoint increment the stream asks for (Syncpoints::IncrementFromCommandStream's rule).
  virtual abi::NvError IncrementSyncpoint(uint32_t id) = 0;
  // The syncpoint's value (ids are checked by the processor).
  virtual uint32_t ReadSyncpoint(uint32_t id) = 0;
};

struct Host1xRun {
  enum class Stop { kDone, kWait, kYield, kError };
  Stop stop = Stop::kDone;
  uint32_t wait_id = 0, wait_thresh = 0;  // kWait: the syncpoint and its (32-bit) threshold
  std::string error;                      // kError
};

class Host1xProcessor {
 public:
  // `engine_class`: the only class besides host1x that SETCLASS may select on this channel.
  explicit Host1xProcessor(uint32_t engine_class) : engine_class_(engine_class) {}

  // Starts a new top-level stream (a command buffer), dropping any unfinished one. The class and
  // the wait bases carry over, as they do between a channel's gathers.
  void Start(std::vector<uint32_t> words);
  // Runs at most `budget` words (data and opcodes; gathered ones count too).
  Host1xRun Run(Host1xEnv& env, uint32_t budget = 1u << 16);
  // Forgets everything (the channel stopped).
  void Reset();

  uint32_t current_class() const { return class_; }
  uint32_t wait_base(uint32_t i) const { return bases_[i]; }
  // Writes to the engine class's registers so far (by word offset: index method & 0xFFF), and
  // host1x class writes.
  uint64_t engine_methods() const { return engine_methods_; }
  uint64_t host_methods() const { return host_methods_; }
  uint64_t engine_method_count(uint32_t method) const { return engine_counts_[method & 0xFFF]; }
  // Engine methods written through METHOD0/METHOD1 so far: all of them, and by the byte offset
  // the class headers give (those at or over kMaxNamedEngineMethod count under it).
  uint64_t class_methods() const { return class_methods_; }
  uint64_t class_method_count(uint32_t byte_offset) const {
    return class_counts_[std::min(byte_offset, kMaxNamedEngineMethod) / 4];
  }
  // What was written since the last ClearTally (the channel clears it per job).
  const Host1xTally& tally() const { return tally_; }
  void ClearTally() { tally_.Clear(); }

 private:
  // What the data words that follow an opcode are written to.
  enum class Mode : uint8_t { kNone, kIncr, kNonIncr, kMask };
  struct Frame {
    std::vector<uint32_t> words;
    size_t pos = 0;
    bool data_only = false;  // a GATHER with insert: every word is method data
    Mode mode = Mode::kNone;
    uint32_t offset = 0;  // method (word offset) of the next data word
    uint32_t count = 0;   // data words left (kIncr, kNonIncr) or mask bits left (kMask)
    uint32_t mask = 0;
  };
  // Writes one method of the current class; false with the error set in `r`, or a pending wait.
  enum class Write : uint8_t { kOk, kWait, kError };
  Write Method(Host1xEnv& env, uint32_t method, uint32_t value, Host1xRun* r);
  Write HostMethod(Host1xEnv& env, uint32_t method, uint32_t value, Host1xRun* r);
  Write SyncptIncr(Host1xEnv& env, uint32_t value, Host1xRun* r);
  // The pending wait is met (24-bit thresholds compare in 24 bits, 32-bit ones in 32).
  bool WaitMet(Host1xEnv& env) const;
  // Sets r's kWait with the pending wait's syncpoint and 32-bit threshold.
  void FillWait(Host1xEnv& env, Host1xRun* r) const;
  // Decodes one opcode word of frame `f`; false when the stream must stop (r set).
  bool Opcode(Host1xEnv& env, Frame& f, uint32_t word, Host1xRun* r);
  // The next data word of frame `f` goes to this method; advances f's method state.
  uint32_t NextDataMethod(Frame& f);

  const uint32_t engine_class_;
  std::vector<Frame> frames_;  // [0] the command buffer, [1] a gather it made
  uint32_t class_ = kHost1xClass;
  std::array<uint32_t, kHost1xWaitBases> bases_{};
  uint32_t payload_ = 0;  // LOAD_SYNCPT_PAYLOAD_32
  bool waiting_ = false;  // a wait method is pending: it completes before anything else runs
  bool wait32_ = false;
  uint32_t wait_id_ = 0, wait_thresh_ = 0;
  uint32_t method_offset_ = 0;  // METHOD0: the engine method METHOD1 writes (word offset)
  uint64_t engine_methods_ = 0, host_methods_ = 0, class_methods_ = 0;
  std::array<uint64_t, 0x1000> engine_counts_{};
  std::array<uint64_t, kMaxNamedEngineMethod / 4 + 1> class_counts_{};
  Host1xTally tally_;
};

}  // namespace nvsentry::hostshim::sim
