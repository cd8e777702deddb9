// Internal to the command processor (command_processor.cc and the *_class.cc engines): the
// channel's pusher state, the engines' method registers, and the engine entry points. Engines
// are plain member functions switched on the bound class, so the decode loop makes no virtual
// call and no allocation per word.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "hostshim/sim/engines/classes/dma_remap.h"
#include "hostshim/sim/engines/command_processor.h"
#include "hostshim/sim/engines/methods.h"
#include "hostshim/sim/engines/mme.h"
#include "hostshim/sim/memory/aligned_buffer.h"
#include "hostshim/sim/memory/block_linear.h"

namespace nvsentry::hostshim::sim {

// The engine classes a subchannel can hold. kNone: nothing bound yet.
enum EngineKind : uint8_t { kNone = 0, kHost, k2D, k3D, kCompute, kI2M, kDma, kNumKinds };

// How a method of a class is handled: stored only and not modelled (counted), stored and used by
// a later trigger (modelled), a trigger that acts, or refused: it would touch memory, a syncpoint
// or a semaphore in a way the simulator does not model, so it stops the channel (class_methods.cc
// has the list). The decoder's bulk paths take only the first two; prefix counts of kTrigger
// include kRefused.
enum MethodKind : uint8_t { kUnmodelled = 0, kRegister = 1, kTrigger = 2, kRefused = 3 };

// Outcome of executing one method write.
enum class Exec : uint8_t {
  kOk,
  kStop,  // result_ says why: a wait (resumable), a fault or an error (the channel stops)
};

// Where the pusher is inside the current command: the next argument goes to `method` on
// `subch`; `remaining` arguments are still to come.
struct PbCursor {
  uint32_t method = 0;
  uint32_t remaining = 0;
  uint8_t subch = 0;
  uint8_t mode = 0;  // pb::kModeInc, kModeNonInc or kModeIncOnce while remaining > 0
};

// Inline-to-memory progress, one per class instance that has the methods (I2M, 3D, compute).
struct I2mProgress {
  bool active = false;
  uint64_t dst = 0;
  uint64_t line_length = 0;  // bytes; coalesced lines make it exceed 32 bits
  uint32_t line_count = 0;
  int32_t pitch = 0;     // PITCH_OUT, signed
  uint32_t line = 0;     // current line
  uint64_t in_line = 0;  // bytes written in the current line
  uint32_t launch = 0;   // the LAUNCH_DMA value (completion, interrupt)
  // A block-linear destination: the lines are rows [origin.y, origin.y + line_count) of
  // origin.z, bytes [origin.x, origin.x + line_length). Its data is gathered in `band` and
  // written a GOB's rows at a time (or sooner, when the band is large), from byte band_x of
  // line band_line on.
  bool block_linear = false;
  BlockLinearSurface surface;
  SurfaceBox origin;
  std::vector<uint8_t> band;
  uint32_t band_line = 0;
  uint64_t band_x = 0;
};

// The DMA copy's bounce buffer. 256 KiB: stays in the L2 cache between the Read and the Write;
// measured faster than 1-4 MiB (bench/gpu_bench), and still few enough calls into GpuMemory (256
// per 64 MiB).
constexpr size_t kDmaBounceBytes = 1u << 18;

// A DMA copy's lines, as LAUNCH_DMA found them: LINE_LENGTH_IN (bytes, or elements with a remap)
// and the number of lines; the pitches serve the pitch sides only.
struct DmaLines {
  uint64_t src = 0, dst = 0;
  uint64_t length = 0, lines = 0;
  int64_t pitch_in = 0, pitch_out = 0;
  const DmaRemap* remap = nullptr;  // null: no remap
};

struct CommandProcessor::State {
  explicit State(ChannelEnv e);

  ChannelEnv env;
  CommandStats stats;
  RunResult result;

  // Pusher.
  std::array<uint8_t, 8> subch_kind{};  // EngineKind per subchannel
  std::array<uint32_t, 8> subch_class{};
  PbCursor cur;
  struct Pending {
    bool active = false;
    uint64_t key = 0;  // the entry, or a hash of the words
    uint64_t pos = 0;  // index of the word to execute next
    PbCursor cursor;
  };
  Pending pending[2];           // [0] GPFIFO entries (Run), [1] words (RunWords)
  Pending* current = nullptr;   // the slot of the segment being run
  std::vector<uint32_t> fetch;  // one chunk of the segment being run
  bool log_debug = false;

  // Engine registers, indexed by method index. Host methods use regs[kHost].
  std::unique_ptr<std::array<std::array<uint32_t, methods::kNumMethods>, kNumKinds>> regs;
  std::array<std::bitset<methods::kNumMethods>, kNumKinds> logged;  // unmodelled, logged once
  std::array<I2mProgress, kNumKinds> i2m;                           // used for k3D, kCompute, kI2M
  std::bitset<kNumKinds> reported_bound;  // classes already reported to StreamPolicy::bound
  AlignedBuffer bounce;                   // DMA copy buffer, allocated on the first copy
  BlockLinearAccess block_linear;         // DMA and inline-to-memory block-linear accesses
  // The 3D class's macros: the expander, and the call being collected (CALL_MME_MACRO(j) and
  // its data, run once the command's last argument arrived).
  MacroExpander mme;
  bool mme_pending = false;
  bool in_macro = false;
  uint32_t mme_macro = 0;
  std::vector<uint32_t> mme_params;
  // Set by the decoder before each method write: it is the last argument of its command.
  bool last_arg = true;
  // The method being executed (class, byte offset, value), for errors found deep inside it.
  uint32_t at_class = 0, at_method = 0, at_value = 0;

  uint32_t& Reg(EngineKind k, uint32_t byte_offset) { return (*regs)[k][byte_offset >> 2]; }

  // Pusher (command_processor.cc).
  RunResult RunSegment(const uint32_t* words, uint64_t length, uint64_t va, bool fetch_words,
                       uint64_t key, bool from_words);
  // Executes words [0, n) whose first word is word `base` of the segment. Returns false when it
  // stopped (result says why; pending is set for waits); *end is set by an END_PB_SEGMENT word.
  bool Execute(const uint32_t* words, size_t n, uint64_t base, bool* end);
  size_t FastRun(const uint32_t* words, size_t n, size_t i);
  enum class StepResult : uint8_t { kContinue, kEnd, kStopped };
  StepResult Step(const uint32_t* words, size_t n, uint64_t base, size_t* at);
  size_t Arguments(const uint32_t* args, size_t n, bool* stopped);
  Exec Write(uint32_t subch, uint32_t method, uint32_t value);
  // The class side of a write: store, then count, execute or refuse (Write and macros).
  Exec EngineWrite(EngineKind k, uint32_t method, uint32_t value);
  Exec Trigger(EngineKind k, uint32_t method, uint32_t value);
  Exec Refuse(EngineKind k, uint32_t method, uint32_t value);      // class_methods.cc
  Exec Notify(EngineKind k, uint32_t value);                       // class_methods.cc
  Exec Unmodelled(EngineKind k, uint32_t method, uint32_t value);  // counts and logs once
  void LogOnce(EngineKind k, uint32_t method, uint32_t value);
  Exec Error(std::string message);
  // A method the GPU refuses: Error, naming the class (its number), the method's byte offset and
  // its value for GET_ERROR_INFO.
  Exec MethodError(uint32_t cls, uint32_t method_byte, uint32_t value, std::string message);
  Exec Fault(const MmuFault& f);
  // A semaphore acquire: counted when `met`, else the processor stops to wait on `va`.
  Exec Acquire(bool met, uint64_t va, uint32_t payload);
  void SaveWait(uint64_t pos);

  // Shared helpers (command_processor.cc).
  uint64_t Now();
  void Interrupt();
  // Writes a 4-byte or 16-byte (payload, 0, timestamp) semaphore release.
  Exec Release(uint64_t va, uint32_t payload, bool four_bytes);
  Exec Release64(uint64_t va, uint64_t value);  // four-word report: value, then timestamp
  // Read-modify-write reduction on a 32-bit semaphore.
  Exec Reduce(uint64_t va, methods::Reduction op, bool is_signed, uint32_t payload);

  // Engines.
  Exec HostMethod(uint32_t subch, uint32_t method, uint32_t value);  // host_class.cc
  // SET_OBJECT of a known class: the hardware's and the policy's rules, then the binding
  // (bind_object.cc).
  Exec BindObject(uint32_t subch, EngineKind k, uint32_t cls, uint32_t value);
  // A syncpoint increment asked for by `cls`'s method (byte offset) with `value`, under the
  // ownership rule (Syncpoints::IncrementFromCommandStream).
  Exec IncrementSyncpoint(uint32_t cls, uint32_t method_byte, uint32_t value, uint32_t id);
  Exec ReportTrigger(EngineKind k, uint32_t method, uint32_t value);  // threed_class.cc
  // The 3D class's own triggers: INCREMENT_SYNC_POINT, constant buffer loads, the MME, firmware
  // method 4 (threed_class.cc).
  Exec ThreeDTrigger(uint32_t method, uint32_t value);
  // LOAD_CONSTANT_BUFFER data: n words at the selected buffer's offset.
  Exec CbData(const uint32_t* words, size_t n);
  Exec MacroCall(uint32_t macro);
  Exec I2mTrigger(EngineKind k, uint32_t method, uint32_t value);  // i2m_class.cc
  // Feeds LOAD_INLINE_DATA words in bulk; returns how many it took (all unless it stopped).
  size_t I2mData(EngineKind k, const uint32_t* words, size_t n, bool* stopped);
  Exec I2mComplete(EngineKind k);
  // Writes the block-linear band gathered so far (i2m_class.cc).
  Exec I2mFlushBand(EngineKind k);
  Exec DmaTrigger(uint32_t method, uint32_t value);  // dma_copy_class.cc
  Exec DmaCopy(uint32_t launch);
  // A copy with a block-linear source, destination or both (dma_block_linear.cc).
  Exec DmaCopyBlockLinear(uint32_t launch, const DmaLines& c);
};

// The class number of an engine kind (0 for kNone).
uint32_t ClassOf(EngineKind k);
// Fills the method table (class_methods.cc), and names the refused and executed methods.
void ClassifyMethods(std::array<std::array<uint8_t, methods::kNumMethods>, kNumKinds>* kind);
std::string_view MethodName(EngineKind k, uint32_t method_index);

// The static method tables (command_processor.cc).
const std::array<uint8_t, methods::kNumMethods>& MethodTable(EngineKind k);
// Number of methods of kind `mk` in [0, i) for class k: O(1) range checks in the bulk paths.
uint16_t MethodPrefix(EngineKind k, MethodKind mk, uint32_t i);

}  // namespace nvsentry::hostshim::sim
