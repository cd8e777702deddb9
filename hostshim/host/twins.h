// The host twins of the guest's nvmap objects: a host nvmap object of the same size for each guest
// object the host GPU has been given (mapped into a host address space, named as a notifier), its
// contents kept coherent with the guest's by an ObjectMirror (object_mirror.h). A twin goes when
// its guest object does (the last guest handle freed): Sweep frees the host object.
//
// The bytes a submission's check read are frozen in their twins until the host's GPU is past the
// submission (freeze_hold.h): pushes leave them as the check saw them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/host/object_mirror.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::host {

// The host's /dev/nvmap as the twins use it (l4t_nvmap.h speaks the L4T ABI; tests fake it).
class HostNvmap {
 public:
  virtual ~HostNvmap() = default;
  // A new object of `size` bytes with its memory; its host handle.
  virtual absl::StatusOr<uint32_t> Make(uint64_t size,
                                        const sim::NvmapObject::Attributes& attr) = 0;
  virtual absl::Status Read(uint32_t handle, uint64_t offset, std::span<uint8_t> out) = 0;
  virtual absl::Status Write(uint32_t handle, uint64_t offset, std::span<const uint8_t> data) = 0;
  virtual void Free(uint32_t handle) = 0;
};

// The host's syncpoints as the twins use them, to tell when a frozen submission is done.
class HostFences {
 public:
  virtual ~HostFences() = default;
  // The value the sentry last saw (its mirror: cheap, may lag the host); nullopt if it has none.
  virtual std::optional<uint32_t> Mirrored(uint32_t id) = 0;
  // The value read from the host now; nullopt when the host does not answer.
  virtual std::optional<uint32_t> Read(uint32_t id) = 0;
  // Increments of `id` the guest may have made itself (its SYNCPT_INCR, its pushbuffers'),
  // counted before they reach the host. The host's own work behind a fence is done only once the
  // syncpoint passed the fence by these too: a guest could otherwise reach the fence itself.
  virtual uint64_t GuestIncrements(uint32_t id) = 0;
};

struct TwinCounts {
  uint64_t twins = 0;
  uint64_t skipped = 0;  // twins whose guest memory is gone: left as they were
  SyncCounts moved;
};

class Twins {
 public:
  // Frozen ranges all the guest's twins may hold together (FrozenRanges bounds each twin).
  static constexpr size_t kMaxFrozenRanges = size_t{1} << 16;
  // Past this many increments of its own, a syncpoint's fences cannot be compared (2^31 apart
  // is ambiguous): what they froze stays frozen.
  static constexpr uint64_t kMaxGuestIncrements = uint64_t{1} << 30;

  // `fences` (may be null: then only released holds thaw) outlives this.
  // `budget` (may be null) is charged one open_fds per twin: on r32.7 kernels each host object is
  // a dma-buf fd of the sentry's, held as long as the twin; and twin_bytes for each page of
  // agreed copy the twins keep (object_mirror.h: the pages either side made other than zero).
  // A push past twin_bytes is ResourceExhausted and moves nothing; a pull keeps what the GPU
  // wrote whatever the budget, and the next push is refused until that is paid.
  explicit Twins(HostNvmap& host, HostFences* fences = nullptr,
                 std::shared_ptr<BudgetAccount> budget = nullptr)
      : host_(host), fences_(fences), budget_(std::move(budget)), page_charges_(budget_.get()) {}
  ~Twins();
  Twins(const Twins&) = delete;
  Twins& operator=(const Twins&) = delete;

  // The host handle of `object`'s twin, made and filled from the guest on first use. An error
  // when the host refuses the object or the guest's memory behind it is gone.
  absl::StatusOr<uint32_t> HandleOf(const std::shared_ptr<sim::NvmapObject>& object);
  // Guest -> host for every twin: before a submission reaches the host. A twin whose guest
  // memory is gone keeps what it last held (counted in `skipped`); a host failure is an error.
  // Frozen bytes stay (counted in moved.held) until their hold thaws: released, or its fence
  // reached in the mirror, or (when the guest changed them) on the host, read at most once per
  // syncpoint per push; reached means passed by the guest's own increments as well.
  absl::StatusOr<TwinCounts> PushAll();
  // Host -> guest for every twin: before the guest can see a fence the host reached. A twin whose
  // guest memory is gone is skipped (its object is being freed).
  absl::StatusOr<TwinCounts> PullAll();
  // The bytes both sides last agreed on at [offset, offset + out.size()) of `object`'s twin
  // (ObjectMirror::ReadAgreed), under the twin's lock: what the host GPU will read there. An error
  // when the object has no twin or the range is outside it.
  absl::Status ReadAgreed(const sim::NvmapObject& object, uint64_t offset, std::span<uint8_t> out);
  // Freezes [offset, offset + size) of `object`'s twin under `hold` (ObjectMirror::Freeze), under
  // the twin's lock: no push moves those bytes after this returns, until the hold thaws. NotFound
  // without a twin; ResourceExhausted past the limits (kMaxFrozenRanges, FrozenRanges).
  absl::Status Freeze(const sim::NvmapObject& object, uint64_t offset, uint64_t size,
                      const std::shared_ptr<FreezeHold>& hold);
  // Frozen ranges held in all twins.
  size_t frozen_ranges() const { return freeze_budget_.used(); }
  // Frees the host objects of twins whose guest object is gone.
  void Sweep();
  // Every push compares the guest's whole objects, not only the pages its process touched: what
  // the twins do where the kernel cannot tell (and what tests force).
  void set_full_compare(bool on) { full_compare_.store(on, std::memory_order_relaxed); }
  size_t size() const;

 private:
  // twin_bytes, with what pulls kept past it.
  class PageCharges : public TwinBudget {
   public:
    explicit PageCharges(BudgetAccount* a) : account(a) {}
    bool Take(uint64_t bytes) override;
    void Force(uint64_t bytes) override;
    void Give(uint64_t bytes) override;

   private:
    BudgetAccount* const account;
    absl::Mutex mu;
    uint64_t owed ABSL_GUARDED_BY(mu) = 0;
  };
  struct Twin {
    Twin(std::weak_ptr<sim::NvmapObject> o, uint32_t h, uint64_t size, FreezeBudget* budget,
         TwinBudget* pages)
        : object(std::move(o)), handle(h), mirror(size, budget, pages) {}
    std::weak_ptr<sim::NvmapObject> object;
    const uint32_t handle;
    std::unique_ptr<BudgetHold> fd_charge;  // open_fds, for the host object's fd
    absl::Mutex mu;
    ObjectMirror mirror ABSL_GUARDED_BY(mu);
  };
  enum class Direction { kPush, kPull };
  // One push's answers from the host, so that each syncpoint is read at most once per push.
  using HostReads = absl::flat_hash_map<uint32_t, std::optional<uint32_t>>;
  absl::StatusOr<TwinCounts> SyncAll(Direction d);
  absl::Status SyncOne(Twin& t, sim::NvmapObject& object, Direction d, SyncCounts* c,
                       HostReads* reads);
  // Whether `hold` thawed (ObjectMirror::ThawTest); host answers kept in `reads` (may be null:
  // the mirror only).
  bool Thawed(FreezeHold& hold, bool ask_host, HostReads* reads);
  std::shared_ptr<Twin> Find(const sim::NvmapObject& object);

  HostNvmap& host_;
  HostFences* const fences_;
  const std::shared_ptr<BudgetAccount> budget_;
  FreezeBudget freeze_budget_{kMaxFrozenRanges};  // before the twins, which give back to it
  PageCharges page_charges_;                      // likewise
  std::atomic<bool> full_compare_{false};
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const sim::NvmapObject*, std::shared_ptr<Twin>> twins_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::host
