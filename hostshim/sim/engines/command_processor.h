// The command processor of one channel: GPFIFO entries -> pushbuffer words fetched through the
// channel's address space (in chunks of 16 Ki words), or handed in already fetched by the
// channel's prefetch (pushbuffer_batch.h) -> command words in every mode -> methods,
// dispatched to the host class (semaphores, syncpoints, WFI, non-stall interrupts) or to the
// engine bound to the method's subchannel: 3D (report semaphore, syncpoint action, constant
// buffer loads, macros, inline-to-memory), compute (report semaphore, inline-to-memory),
// inline-to-memory, DMA copy (pitch copies, remap and fills, semaphores), 2D (state). A method
// that would touch memory, a syncpoint or a semaphore and is not simulated (draws, compute
// launches, 2D blits, block-linear copies) stops the channel; pure state is stored and counted
// (class_methods.cc). Method facts: NVIDIA's open-gpu-doc class headers.
//
// Not thread-safe: one caller at a time (the channel's engine thread), stats() included.
// Syncpoint increments run the syncpoint table's waiter callbacks, and interrupts run
// ChannelEnv::nonstall_interrupt, on the calling thread: do not call Run() holding a lock those
// callbacks take. Per channel it holds about 180 KiB (112 KiB of method registers, a 64 KiB
// fetch chunk), plus a 256 KiB DMA bounce buffer from the first copy on and the macro code a
// client loads (at most 256 KiB). Copies of 8 MiB or more use 1 MiB buffers of their own, of
// which the sentry keeps four for all channels.
//
// It is resumable: a syncpoint wait or semaphore acquire that is not yet satisfied stops it with
// the condition, and the next Run() of the same entry continues from that word. State it does
// not model is counted (and logged once), never fatal. A fault or a bad or refused command stops
// the channel with the error the channel reports.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abi/devices/channel.h"
#include "hostshim/sim/engines/stream_policy.h"
#include "hostshim/sim/memory/gpu_memory.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// What a channel's commands act on. Pointers are owned by the channel and outlive the processor.
struct ChannelEnv {
  GpuMemory* memory = nullptr;  // the bound address space; null faults every access
  Syncpoints* syncpoints = nullptr;
  uint32_t syncpoint_id = 0;  // the channel's own syncpoint
  // Raised by NON_STALL_INTERRUPT and by engine completions that ask for an interrupt.
  std::function<void()> nonstall_interrupt;
  // Nanoseconds on the GPU clock (semaphore timestamps).
  std::function<uint64_t()> gpu_time_ns;
  // The guest's rules for its command streams (stream_policy.h); null: every class may be bound
  // (tests, fuzzers).
  const StreamPolicy* policy = nullptr;
  // The class of the channel's object context (ALLOC_OBJ_CTX), 0 while it has none: the
  // graphics-engine classes need one that is itself a graphics class. Null: a graphics context
  // is assumed (tests, fuzzers).
  const std::atomic<uint32_t>* object_class = nullptr;
};

// Why Run() returned.
struct RunResult {
  enum class Stop : uint8_t {
    kDone,           // the entry is finished
    kWaitSyncpoint,  // a syncpoint wait is not yet satisfied: run the same entry again once
                     // syncpoint `id` reaches `threshold`
    kWaitSemaphore,  // a semaphore acquire is not yet satisfied: run the same entry again later
    kFault,          // MMU fault (fault holds where); the channel must stop
    kError,          // a malformed or refused command (error says what; error_class,
                     // error_method and error_value which method): the channel must stop
  };
  Stop stop = Stop::kDone;
  uint32_t id = 0, threshold = 0;  // kWaitSyncpoint; kWaitSemaphore: threshold = the payload
  uint64_t va = 0;                 // kWaitSemaphore: the semaphore's GPU address
  MmuFault fault;
  std::string error;
  // kError from a method (0 0 0 for an error of the pusher itself): the class it was sent to
  // (0xB06F for the host class), its byte offset and its value.
  uint32_t error_class = 0, error_method = 0, error_value = 0;
};

// Counters for DumpStatus, the demo's summary and the tests.
struct CommandStats {
  uint64_t entries = 0;
  uint64_t words = 0;       // pushbuffer words fetched
  uint64_t methods = 0;     // method writes executed
  uint64_t unmodelled = 0;  // method writes the simulator counted but does not model
  uint64_t syncpoint_incrs = 0;
  uint64_t semaphore_releases = 0;
  uint64_t semaphore_acquires = 0;
  uint64_t report_releases = 0;  // 3D report semaphores
  uint64_t i2m_bytes = 0;        // inline-to-memory bytes written
  uint64_t dma_copies = 0;       // DMA LAUNCH_DMAs
  uint64_t dma_bytes = 0;
  uint64_t nonstall_interrupts = 0;
  uint64_t macro_calls = 0;         // 3D CALL_MME_MACRO calls run
  uint64_t cb_bytes = 0;            // constant buffer bytes loaded
  uint64_t truncated_commands = 0;  // a command whose arguments ran past its segment's end
};

// A DMA LAUNCH_DMA moving more than this (or more lines) is a channel error: it would hold the
// engine thread for seconds.
constexpr uint64_t kMaxDmaBytes = 4ull << 30;
constexpr uint64_t kMaxDmaLines = 1u << 24;

class CommandProcessor {
 public:
  explicit CommandProcessor(ChannelEnv env);
  ~CommandProcessor();
  // Runs (or resumes) one GPFIFO entry. A stopped wait is resumed by the next call with the same
  // entry (the words already executed are not executed again); any other entry forgets it.
  RunResult Run(const abi::channel::GpfifoEntry& entry);
  // The same with the entry's segment already fetched (`words`, as many as the entry's length:
  // a pushbuffer prefetch). Nothing is read for the segment; everything else is as Run(entry).
  // Words of the wrong length are ignored (the segment is fetched).
  RunResult Run(const abi::channel::GpfifoEntry& entry, std::span<const uint32_t> words);
  // Runs a pushbuffer that is already in sentry memory (the words of one segment): the
  // kernel-style fence words the channel adds around a submit, and tests. A stopped wait is
  // resumed by the next call with the same words (same length and contents).
  RunResult RunWords(std::span<const uint32_t> words);
  // Forgets the engines bound to subchannels and any half-done entry (FORCE_RESET).
  void Reset();
  const CommandStats& stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nvsentry::hostshim::sim
