// The host twins of the guest's nvmap objects: a host nvmap object of the same size for each guest
// object the host GPU has been given (mapped into a host address space, named as a notifier), its
// contents kept coherent with the guest's by an ObjectMirror (object_mirror.h). A twin goes when
// its guest object does (the last guest handle freed): Sweep frees the host object.
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
#include "hostshim/host/gpu_writes.h"
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

struct TwinCounts {
  uint64_t twins = 0;
  uint64_t skipped = 0;  // twins whose guest memory is gone: left as they were
  SyncCounts moved;
};

class Twins {
 public:
  // `budget` (may be null) is charged one open_fds per twin: on r32.7 kernels each host object is
  // a dma-buf fd of the sentry's, held as long as the twin; and twin_bytes for each page of
  // agreed copy the twins keep (object_mirror.h: the pages either side made other than zero).
  // A push past twin_bytes is ResourceExhausted and moves nothing; a pull keeps what the GPU
  // wrote whatever the budget, and the next push is refused until that is paid.
  explicit Twins(HostNvmap& host, std::shared_ptr<BudgetAccount> budget = nullptr)
      : host_(host), budget_(std::move(budget)), page_charges_(budget_.get()) {}
  ~Twins();
  Twins(const Twins&) = delete;
  Twins& operator=(const Twins&) = delete;

  // The host handle of `object`'s twin, made and filled from the guest on first use. An error
  // when the host refuses the object or the guest's memory behind it is gone.
  absl::StatusOr<uint32_t> HandleOf(const std::shared_ptr<sim::NvmapObject>& object);
  // Guest -> host for every twin: before a submission reaches the host. A twin whose guest
  // memory is gone keeps what it last held (counted in `skipped`); a host failure is an error.
  absl::StatusOr<TwinCounts> PushAll();
  // The same over what `plan` names (a submission's footprint): a twin it does not name is not
  // read, and the guest's changes elsewhere wait for a push that names them.
  absl::StatusOr<TwinCounts> PushAll(const SyncPlan& plan);
  // Host -> guest for every twin: before the guest can see a fence the host reached. A twin whose
  // guest memory is gone is skipped (its object is being freed).
  absl::StatusOr<TwinCounts> PullAll();
  // The same over what `plan` names (gpu_writes.h): a twin it does not name is not read.
  absl::StatusOr<TwinCounts> PullAll(const SyncPlan& plan);
  // The bytes both sides last agreed on at [offset, offset + out.size()) of `object`'s twin
  // (ObjectMirror::ReadAgreed), under the twin's lock: what the host GPU will read there. An error
  // when the object has no twin or the range is outside it.
  absl::Status ReadAgreed(const sim::NvmapObject& object, uint64_t offset, std::span<uint8_t> out);
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
    Twin(std::weak_ptr<sim::NvmapObject> o, uint32_t h, uint64_t size, TwinBudget* pages)
        : object(std::move(o)), handle(h), mirror(size, pages) {}
    std::weak_ptr<sim::NvmapObject> object;
    const uint32_t handle;
    std::unique_ptr<BudgetHold> fd_charge;  // open_fds, for the host object's fd
    absl::Mutex mu;
    ObjectMirror mirror ABSL_GUARDED_BY(mu);
  };
  enum class Direction { kPush, kPull };
  // `plan`: the ranges to move (null: every twin whole).
  absl::StatusOr<TwinCounts> SyncAll(Direction d, const SyncPlan* plan = nullptr);
  absl::Status SyncOne(Twin& t, sim::NvmapObject& object, Direction d, SyncCounts* c,
                       std::optional<std::span<const ObjectSide::Interval>> where = std::nullopt);
  std::shared_ptr<Twin> Find(const sim::NvmapObject& object);

  HostNvmap& host_;
  const std::shared_ptr<BudgetAccount> budget_;
  PageCharges page_charges_;  // before the twins, which give back to it
  std::atomic<bool> full_compare_{false};
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const sim::NvmapObject*, std::shared_ptr<Twin>> twins_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::host
