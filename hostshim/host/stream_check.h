// The sandbox's command-stream rules (docs/security.md, "Command stream") for a channel whose
// pushbuffers run on the host's GPU: the sentry decodes each submission's words before the host
// sees them and refuses the submission when they would
// - bind a class the policy's channel classes refuse (SET_OBJECT; the policy's action decides,
//   through the same StreamPolicy::violation the simulator calls), or one that is no GM20B class;
// - move a syncpoint the guest does not own (the host class's SYNCPOINTB increment, the 3D class's
//   INCREMENT_SYNC_POINT, sent directly or by a macro), or touch a wait base (SYNCPOINTB's base
//   operations, which the simulator refuses too);
// - write into memory StreamRules::reserved names, where the address is in the stream: the host
//   class's semaphore releases and reductions, the 3D class's report semaphores, the
//   inline-to-memory destinations of the 3D, compute and inline-to-memory classes and their
//   completion semaphores, the DMA class's destinations and semaphores. Other writes (a shader's
//   stores, render targets, the 2D class's destinations) are not decoded (docs/security.md);
// - copy with physical addresses (the DMA class's LAUNCH_DMA with SRC_ or DST_PHYSICAL), which
//   the simulator refuses too.
// Everything else (draws, copies, semaphores) is the host GPU's to run: its MMU confines it to
// the guest's own mappings.
//
// The decoding is the simulator's: pushbuffer.h's word formats, methods.h's method numbers, and
// its macro expander (mme.h) run over a shadow of the 3D class's registers, so that what a macro
// sends is checked as the pushbuffer's own methods are. Where the simulator tolerates what the
// hardware might read otherwise, the check refuses instead: a command whose arguments run past
// its entry's end (the host's PBDMA may go on into the next entry's words) and a method for a
// subchannel with no class bound (the check cannot know what it reaches).
//
// State (the subchannels' classes, the 3D registers, the macros) lives across submissions, as
// the host channel's does; a refused submission stops the channel (the caller answers Timeout to
// submits until FORCE_RESET, which calls Reset). Work is bounded per submission (kMaxWords words,
// kMaxMacroSteps macro instructions); past either the submission is refused. Not thread-safe:
// one submission at a time per channel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hostshim/sim/engines/mme.h"
#include "hostshim/sim/engines/stream_policy.h"

namespace nvsentry::hostshim::host {

// Why a submission may not reach the host, in the simulator's terms (sim::RunResult's kError):
// the method's class (0xB06F the host class, 0 for an error of the pusher itself), its byte
// offset and its value.
struct StreamRefusal {
  uint32_t error_class = 0, method = 0, value = 0;
  std::string what;
};

// The words of one GPFIFO entry of the submission (`entry`, its index) that make an increment of
// a syncpoint the guest owns and nothing else: whole commands of the host class's SYNCPOINTA and
// SYNCPOINTB increments, or of the 3D class's INCREMENT_SYNC_POINT. The channel passes the host
// the entries without them (docs/host-passthrough.md, "Guest syncpoints").
struct StreamCut {
  size_t entry = 0;
  uint32_t begin = 0, end = 0;  // words [begin, end) of the entry
};

// Where a submission's words may make the GPU write (gpu_writes.h), and where they make it read
// memory the guest's CPU may have written (what the submission pushes first: twins.h). `ranges`:
// the writes whose address is in the stream; `reads`: the reads whose address is (a DMA copy's
// source, a semaphore acquire's word). `anywhere` when a method may write or read where the
// stream does not say (any 3D-class method but the few decoded ones, any compute- or 2D-class
// method, any other class: a draw's render targets and textures, a shader's loads and stores, a
// blit), or when the ranges passed kMaxRanges.
struct StreamFootprint {
  static constexpr size_t kMaxRanges = 4096;  // writes and reads, each
  struct Range {
    uint64_t va, size;
  };
  std::vector<Range> ranges;
  std::vector<Range> reads;
  bool anywhere = false;
  // The words may wait for memory the CPU writes (a semaphore acquire; or anything that sets
  // `anywhere`, since a shader may spin on memory too): while such a job runs, the guest's CPU
  // writes go on reaching the host (HostContext's poll).
  bool waits = false;
  // No write (the job's fence then says nothing of memory).
  bool empty() const { return ranges.empty() && !anywhere; }
};

struct StreamRules {
  const sim::StreamPolicy* policy = nullptr;  // null: every GM20B class may be bound
  std::function<bool(uint32_t id)> owns;      // the syncpoints a stream may increment
  // Whether [va, va + size) meets memory no stream may write (the sentry's private pushbuffer
  // copies: pushbuffer_copy.h); null: none.
  std::function<bool(uint64_t va, uint64_t size)> reserved;
};

class StreamCheck {
 public:
  static constexpr uint64_t kMaxWords = uint64_t{1} << 24;       // per submission (64 MiB)
  static constexpr uint64_t kMaxMacroSteps = uint64_t{1} << 24;  // per submission

  explicit StreamCheck(StreamRules rules);
  // A new submission: its budgets start over.
  void BeginSubmission();
  // One GPFIFO entry's words; nullopt when they may run.
  std::optional<StreamRefusal> Segment(std::span<const uint32_t> words);
  // The syncpoint increments this submission's words make (of syncpoints the guest owns), by id.
  const absl::flat_hash_map<uint32_t, uint64_t>& increments() const { return increments_; }
  // Where those increments are, when every one of them is a command of its own (cuttable()).
  const std::vector<StreamCut>& cuts() const { return cuts_; }
  // False when an increment of an owned syncpoint shares its command with another method or is
  // sent by a macro: the words cannot be cut out.
  bool cuttable() const { return cuttable_; }
  // Whether the words wait (SYNCPOINTB) on a syncpoint the guest owns.
  bool waits_on_own() const { return waits_on_own_; }
  // Where this submission's words may make the GPU write, and read what the CPU wrote.
  const StreamFootprint& footprint() const { return footprint_; }
  // FORCE_RESET: nothing bound, no registers, no macros.
  void Reset();
  // The submission the words since BeginSubmission made will not reach the host (the channel
  // answers it NotSupported, or the host refused it): the state goes back to what it was before
  // them, so that later submissions are checked against the registers the host really holds.
  void Rollback();

 private:
  struct Cursor {
    uint32_t method = 0, remaining = 0, subch = 0, mode = 0;
  };
  // Write, noting what the command wrote (for cuts()).
  std::optional<StreamRefusal> Written(uint32_t subch, uint32_t method, uint32_t value,
                                       bool last_arg);
  std::optional<StreamRefusal> Write(uint32_t subch, uint32_t method, uint32_t value,
                                     bool last_arg);
  std::optional<StreamRefusal> HostMethod(uint32_t subch, uint32_t method, uint32_t value);
  std::optional<StreamRefusal> ThreeD(uint32_t method, uint32_t value, bool last_arg);
  // A write of [va, va + size) by method `method_byte` of class `cls`: refused when reserved,
  // else noted in the footprint.
  std::optional<StreamRefusal> Writes(uint32_t cls, uint32_t method_byte, uint32_t value,
                                      uint64_t va, uint64_t size);
  // Methods of the inline-to-memory, compute and DMA classes: their registers, their launches.
  std::optional<StreamRefusal> Other(uint32_t cls, uint32_t method, uint32_t value);
  std::optional<StreamRefusal> InlineToMemory(uint32_t cls, const std::vector<uint32_t>& regs,
                                              uint32_t value);
  std::optional<StreamRefusal> DmaLaunch(const std::vector<uint32_t>& regs, uint32_t value);
  // SET_NOTIFY_A/B and NOTIFY, which every graphics-engine class has (the DMA class has neither),
  // sent by the stream or by a 3D macro.
  std::optional<StreamRefusal> NotifyMethods(uint32_t cls, uint32_t method, uint32_t value);
  // NOTIFY of a graphics-engine class (2D, 3D, compute, inline-to-memory): 16 bytes at
  // SET_NOTIFY_A/B.
  std::optional<StreamRefusal> Notify(uint32_t cls, uint32_t value);
  // Register `method` of class `cls` (the 3D class's in regs3d_) becomes `value`, remembered
  // for Rollback.
  void SetReg(uint32_t cls, std::vector<uint32_t>& regs, uint32_t method, uint32_t value);
  // Notes a write of [va, va + size) in the footprint (no reserved check: the caller's).
  void Footprint(uint64_t va, uint64_t size);
  // Notes a read of [va, va + size) in the footprint.
  void Reads(uint64_t va, uint64_t size);
  std::optional<StreamRefusal> Increment(uint32_t cls, uint32_t method_byte, uint32_t value,
                                         uint32_t id);

  StreamRules rules_;
  std::array<uint32_t, 8> subch_class_{};  // 0: nothing bound
  uint32_t sem_a_ = 0, sem_b_ = 0;         // the host class's SEMAPHOREA/B
  uint32_t reported_ = 0;                  // classes told to StreamPolicy::bound (bit per class)
  std::vector<uint32_t> regs3d_;           // the 3D class's registers, as a macro reads them
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> regs_;  // Other's classes', by class
  sim::MacroExpander mme_;
  bool in_macro_ = false;
  std::optional<uint32_t> macro_;  // the call being collected
  std::vector<uint32_t> params_;
  uint64_t words_ = 0, steps_ = 0;                      // this submission's
  absl::flat_hash_map<uint32_t, uint64_t> increments_;  // this submission's
  // The command being decoded: where it began, whether it incremented an owned syncpoint and
  // whether it wrote any other method (SYNCPOINTA aside).
  enum class Wrote { kOther, kSyncpointA, kOwnIncrement };
  void EndCommand(size_t end);
  size_t segment_ = 0, command_begin_ = 0;
  Wrote wrote_ = Wrote::kOther;
  bool command_increments_ = false, command_other_ = false;
  std::vector<StreamCut> cuts_;  // this submission's
  StreamFootprint footprint_;    // this submission's
  // Each class's SET_NOTIFY_A/B, and the inline-to-memory class's last destination (its
  // LOAD_INLINE_DATA, in this submission or a later one, writes there).
  absl::flat_hash_map<uint32_t, std::pair<uint32_t, uint32_t>> notify_;
  std::optional<StreamFootprint::Range> i2m_dst_;
  // What Rollback restores: the state at BeginSubmission, the registers written since (class,
  // method, old value, newest last), and the macro RAM, copied at its first change.
  struct Saved {
    std::array<uint32_t, 8> subch_class{};
    uint32_t sem_a = 0, sem_b = 0;
    absl::flat_hash_map<uint32_t, std::pair<uint32_t, uint32_t>> notify;
    std::optional<StreamFootprint::Range> i2m_dst;
  } saved_;
  struct Undo {
    uint32_t cls, method, old;
  };
  std::vector<Undo> undo_;
  std::optional<sim::MacroExpander> saved_mme_;
  // The macro RAM is about to change: copy it once per submission.
  void SaveMme() {
    if (!saved_mme_) saved_mme_ = mme_;
  }
  bool cuttable_ = true, waits_on_own_ = false;
};

}  // namespace nvsentry::hostshim::host
