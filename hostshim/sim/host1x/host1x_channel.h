// The running half of a host1x engine channel (/dev/nvhost-vic, -nvdec, -nvjpg, -msenc, -tsec):
// the buffers MAP_CMD_BUFFER pinned at device addresses, the queue of submitted jobs, and the
// host1x command processor that runs them on the GPU's engine threads.
//
// Mappings: each handle MAP_CMD_BUFFER pins gets one 32-bit device address (4 KiB aligned, first
// fit in [kFirstAddress, 2^32)); mapping it again counts a reference, UNMAP drops one. A job pins
// its command buffers (it holds their objects) and the mappings its relocations name, as Linux's
// host1x_job_pin does, so unmapping a buffer that queued work still uses changes nothing for that
// work: the address stays valid (and is not handed out again) until the job ends.
//
// A job: its command buffers, read from their nvmap objects when the job reaches them, with the
// relocations patched in; then the syncpoint increments the submit promised that the stream did
// not make itself are made. A command buffer that runs past its object, a GATHER outside a
// mapping, an unknown opcode or a refused increment stops the channel: pending jobs are dropped,
// every syncpoint they promised moves up to its max (nobody waits forever), and later submits
// answer Timeout, which is how the guest reads that the channel failed (as for GPU channels).
//
// For the trace: when a note hook is given, each finished job is described in one line (what the
// stream wrote, by name: host1x_methods.h) and so is a stop, under the submitting thread's id.
//
// Lock order: the channel's lock is a leaf; syncpoints, nvmap objects and the note hook are
// called outside it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "abi/nverror.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/host1x/host1x_processor.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// A line for the trace about the work of the thread `tid` (0: none known). Thread-safe; called on
// engine threads.
using Host1xNote = std::function<void(pid_t tid, std::string_view text)>;

struct Host1xCmdbuf {
  std::shared_ptr<NvmapObject> object;
  uint32_t handle = 0;
  uint32_t offset = 0;  // bytes
  uint32_t words = 0;
};
struct Host1xReloc {
  size_t cmdbuf = 0;                                  // index into the job's cmdbufs
  uint32_t word = 0;                                  // word index inside that command buffer
  uint32_t target = 0, target_offset = 0, shift = 0;  // the word becomes (address + off) >> shift
  uint32_t value = 0;                                 // Submit: what the word becomes
};
struct Host1xFence {
  uint32_t id = 0, increments = 0;
  uint32_t threshold = 0;  // Submit: the syncpoint's new max
};
struct Host1xJob {
  std::vector<Host1xCmdbuf> cmdbufs;
  std::vector<Host1xReloc> relocs;  // Submit sorts them by (cmdbuf, word)
  std::vector<Host1xFence> fences;
  std::vector<uint32_t> pinned;  // Submit: device addresses of the mappings it pins
  pid_t tid = 0;                 // the submitting thread (for the trace)
  uint64_t charged = 0;          // Submit: the queued_bytes it holds until done or dropped
};

class Host1xChannel : public Runnable, public std::enable_shared_from_this<Host1xChannel> {
 public:
  static constexpr uint32_t kFirstAddress = 0x10000;
  static constexpr size_t kMaxMappings = 4096;       // distinct handles mapped at once
  static constexpr uint32_t kMaxMapRefs = 1u << 20;  // MAP_CMD_BUFFERs of one handle
  static constexpr size_t kMaxPendingJobs = 256;     // more: Busy (the client retries)
  static constexpr uint32_t kMaxCmdbufWords = 1u << 20;

  // `note`, when not null, outlives the channel; so does `budget` (the guest's queued_bytes, which
  // each queued job holds; may be null: nothing is charged).
  Host1xChannel(Syncpoints& syncpoints, Runlist& runlist, uint32_t engine_class,
                const Host1xNote* note = nullptr, BudgetAccount* budget = nullptr)
      : syncpoints_(syncpoints),
        runlist_(runlist),
        engine_class_(engine_class),
        note_(note && *note ? note : nullptr),
        budget_(budget),
        cp_(engine_class) {}
  ~Host1xChannel() override;

  // MAP_CMD_BUFFER of one handle: its device address (the same one while it stays mapped).
  // InsufficientMemory when the mapping count or the address space is exhausted.
  abi::NvError Map(uint32_t handle, std::shared_ptr<NvmapObject> object, uint32_t* address);
  // UNMAP_CMD_BUFFER of one handle: BadValue when it is not mapped.
  abi::NvError Unmap(uint32_t handle);
  bool Mapped(uint32_t handle) const;
  // The device address of a mapped handle, or 0.
  uint32_t AddressOf(uint32_t handle) const;

  // Queues a job: resolves and pins its relocation targets (BadParameter when one is not
  // mapped), promises its fences (each threshold is the syncpoint's new max) and copies them to
  // *fences. Timeout once the channel failed or closed, Busy when kMaxPendingJobs are queued or
  // the job's state (its descriptors, relocations and fences) does not fit the guest's
  // queued_bytes budget now (the client retries; the queue drains as jobs finish).
  abi::NvError Submit(Host1xJob job, std::vector<Host1xFence>* fences);

  bool failed() const;
  std::string error() const;
  size_t pending_jobs() const;
  uint64_t jobs_done() const;
  uint64_t engine_methods() const;
  // What the finished jobs wrote, by space and offset (Host1xTally::Count).
  uint64_t method_count(Host1xSpace space, uint32_t offset) const;
  // The device session closed: drop pending work (its promised increments are released).
  void Close();

  void Run() override;

 private:
  struct Mapping {
    uint32_t handle;
    std::shared_ptr<NvmapObject> object;
    uint64_t size;
    uint32_t refs = 0;  // MAP_CMD_BUFFERs not yet unmapped
    uint32_t pins = 0;  // jobs that use it
  };
  class Env;
  class Requeue;

  // Finds room for `size` bytes; 0 when there is none.
  uint32_t FindAddressLocked(uint64_t size) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnpinLocked(const std::vector<uint32_t>& pinned) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropIfUnusedLocked(uint32_t address) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads command buffer `i` of the front job and applies its relocations.
  bool LoadCmdbuf(const Host1xJob& job, size_t i, std::vector<uint32_t>* words, std::string* why);
  void FinishFrontJob(uint64_t epoch, const Host1xJob& job);
  // Blocks on syncpoint `id` reaching `thresh`; false when it already has.
  bool BlockOn(uint64_t epoch, uint32_t id, uint32_t thresh);
  void Fail(std::string why);
  void ReleaseQueued(const Host1xJob& job);
  // Drops the queue: returns the syncpoints whose promises must be released.
  std::vector<uint32_t> DropAllLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unblock(uint64_t epoch);
  uint64_t epoch() const;

  Syncpoints& syncpoints_;
  Runlist& runlist_;
  const uint32_t engine_class_;
  const Host1xNote* const note_;
  BudgetAccount* const budget_;
  Host1xProcessor cp_;       // engine thread only
  size_t next_cmdbuf_ = 0;   // engine thread only: the front job's next command buffer
  bool started_ = false;     // engine thread only: cp_ holds a command buffer of the front job
  uint64_t seen_epoch_ = 0;  // engine thread only

  mutable absl::Mutex mu_;
  std::map<uint32_t, Mapping> by_address_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, uint32_t> by_handle_ ABSL_GUARDED_BY(mu_);  // mapped handles
  std::deque<std::shared_ptr<const Host1xJob>> jobs_ ABSL_GUARDED_BY(mu_);
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // bumped whenever the queue is dropped
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string error_ ABSL_GUARDED_BY(mu_);
  uint64_t jobs_done_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t engine_methods_ ABSL_GUARDED_BY(mu_) = 0;
  Host1xTally done_ ABSL_GUARDED_BY(mu_);  // the finished jobs' writes
};

}  // namespace nvsentry::hostshim::sim
