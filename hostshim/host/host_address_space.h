// One guest address space on the host: the host's nvhost-as-gpu open (r32.7 makes the address
// space at the open, with the host's default layout) and the sentry's record of what the guest
// holds in it, so that
// - budgets are charged as the simulated GPU charges them (address_spaces while the space lives,
//   one `mappings` charge per mapping and per reservation: sim/memory/address_space.h);
// - the guest can only unmap or free what it mapped or reserved (FREE_SPACE with its exact size),
//   and the sentry knows which mappings a FREE_SPACE takes with it;
// - a host mapping goes when the guest's object goes: each mapping registers the space as a
//   MappingOwner of the guest's nvmap object, and ForceUnmap unmaps it on the host. The space's
//   end unmaps everything left.
// It lives while the guest's session or a channel bound to it holds it (as the simulated space
// does), and owns the host fd meanwhile. Each mapping pins its guest object, and so its twin.
//
// Thread safety: every method may be called from any thread; host calls on the space are made
// under its lock, so records and the host never disagree. Lock order: the space's lock, then an
// NvmapObject's (as sim::AddressSpace).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/l4t/nvgpu_as.h"
#include "abi/nverror.h"
#include "absl/container/btree_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/host/as_xlate.h"
#include "hostshim/host/host_call.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim {
class BudgetAccount;
}

namespace nvsentry::hostshim::host {

// GET_VA_REGIONS on a host address space fd: up to out.size() regions in `out`, their number in
// `*n`.
abi::NvError HostVaRegions(int fd, const HostNote& note, pid_t tid,
                           std::span<abi::l4t::nvgpu_as::VaRegion> out, size_t* n);

// ctrl-gpu ALLOC_AS on the host (nvhost-ctrl-gpu under `dev_dir`): a new address space fd with
// big pages of `big_page_size` (L4T-CTRL-11), for a guest whose size is not the node's default
// (L4T-AS-1). Null with the host's errno in *err when it refuses (a FUSE-served host cannot hand
// out the fd: ENOTTY).
UniqueFd HostAllocAs(const std::string& dev_dir, uint32_t big_page_size, const HostNote& note,
                     pid_t tid, int* err);

class HostAddressSpace : public sim::MappingOwner,
                         public std::enable_shared_from_this<HostAddressSpace> {
 public:
  // Entries (mappings plus reservations) one space may hold, whatever the budget, as simulated.
  static constexpr size_t kMaxEntries = size_t{1} << 18;

  // Takes the address_spaces charge of `budget` (may be null); null, with the NvError in *err
  // and `fd` given back through `*fd`, when it is spent. `budget` and `note` outlive the space.
  static std::shared_ptr<HostAddressSpace> Create(UniqueFd* fd, BudgetAccount* budget,
                                                  HostNote note, abi::NvError* err);
  ~HostAddressSpace() override;
  HostAddressSpace(const HostAddressSpace&) = delete;
  HostAddressSpace& operator=(const HostAddressSpace&) = delete;

  void ForceUnmap(uint64_t va) override;

  // The host calls, each traced for guest thread `tid`. Arguments in the guest's layout where it
  // is the host's (ALLOC_SPACE, FREE_SPACE).
  abi::NvError AllocSpace(pid_t tid, abi::nvhost_as_gpu::AllocSpace* a);
  abi::NvError FreeSpace(pid_t tid, const abi::nvhost_as_gpu::FreeSpace& a);
  // `m` comes from MapToHost for `object`; the mapping's VA out.
  abi::NvError Map(pid_t tid, const std::shared_ptr<sim::NvmapObject>& object, const HostMap& m,
                   uint64_t* va);
  abi::NvError Unmap(pid_t tid, uint64_t va);
  abi::NvError Regions(pid_t tid, std::span<abi::l4t::nvgpu_as::VaRegion> out, size_t* n);
  // BIND_CHANNEL of the host channel `channel_host_fd` (the sentry's own fd of it).
  abi::NvError Bind(pid_t tid, int channel_host_fd);

  // Where [va, va + size) lies in the guest's objects, piece by piece in order (a range may span
  // adjacent mappings); false when any byte of it is in no mapping of the guest's.
  struct Piece {
    std::shared_ptr<sim::NvmapObject> object;
    uint64_t offset = 0;  // in the object
    uint64_t size = 0;
  };
  bool Resolve(uint64_t va, uint64_t size, std::vector<Piece>* out) const;
  // The pieces of [va, va + size) that mappings of the guest's hold, appended to `out` (bytes in
  // no mapping are skipped: the GPU writes nothing there); false, with `out` holding `limit`,
  // when there are more.
  bool MappedPieces(uint64_t va, uint64_t size, size_t limit, std::vector<Piece>* out) const;
  // Every mapping of the guest's, as pieces, appended to `out`; false past `limit`, as above.
  bool AllPieces(size_t limit, std::vector<Piece>* out) const;

  // The sentry's private window (pushbuffer_copy.h): kPrivateWindow bytes of VA reserved on the
  // host at a random place in the hidden zone, before the guest can reserve or map anything
  // (AsSession::AllocAs makes it with the space), so the guest cannot steer where it lies. The
  // hidden zone is the upper half of the space's largest region (whole pages), and it is not the
  // guest's: GET_VA_REGIONS ends that region where the zone starts, a fixed ALLOC_SPACE or map
  // meeting it answers as one beyond the space's end, and an anywhere one the host puts there is
  // given back as no room. So every guest call answers alike wherever the window lies in the
  // zone, and no probe finds it. Channels map their private copies into the window's slots. An
  // error when the host has no room for it.
  static constexpr uint64_t kPrivateWindow = uint64_t{128} << 20;
  abi::NvError ReservePrivateWindow(pid_t tid);
  // Maps host object `handle` (`size` bytes, the sentry's own) into a free slot of the window;
  // InsufficientMemory when every slot is taken.
  abi::NvError MapPrivate(pid_t tid, uint32_t handle, uint64_t size, uint64_t* va);
  void UnmapPrivate(uint64_t va);
  // Whether [va, va + size) meets the hidden zone (a write there may reach the sentry's copies;
  // refused across the whole zone, so that a refusal says nothing of where the window lies).
  bool MeetsPrivate(uint64_t va, uint64_t size) const;

  size_t mapping_count() const;
  size_t reservation_count() const;

  // Held shared by a submission from its check until the host has taken the job, exclusively by
  // whatever takes a mapping away (UNMAP, FREE_SPACE, a freed object's ForceUnmap): between the
  // check and the host's own hold on the job's buffers, the guest must not be able to put other
  // (unchecked) memory under a checked VA.
  class SubmitHold {
   public:
    explicit SubmitHold(const HostAddressSpace* s) : s_(s) {
      if (s_) s_->submit_mu_.ReaderLock();
    }
    ~SubmitHold() {
      if (s_) s_->submit_mu_.ReaderUnlock();
    }
    SubmitHold(const SubmitHold&) = delete;
    SubmitHold& operator=(const SubmitHold&) = delete;

   private:
    const HostAddressSpace* s_;
  };

 private:
  HostAddressSpace(UniqueFd fd, BudgetAccount* budget, HostNote note)
      : fd_(std::move(fd)), budget_(budget), note_(std::move(note)) {}
  struct Mapping {
    std::shared_ptr<sim::NvmapObject> object;
    uint64_t size;
    uint64_t offset;  // of the mapping's first byte in the object
    // An anywhere mapping made at a fixed VA in a reservation of the sentry's own (MapOwn), freed
    // with it.
    bool own_reservation = false;
  };
  struct Reservation {
    uint64_t size;
    uint32_t page_size;
  };
  template <typename T>
  HostCallResult Call(pid_t tid, uint32_t code, T& arg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One more entry: the cap, then the budget.
  abi::NvError TakeEntry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GiveEntry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether [va, va + size) meets a mapping of the guest's (a fixed map there clashes).
  bool Overlaps(uint64_t va, uint64_t size) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `object` is mapped in the space already.
  bool Maps(const sim::NvmapObject* object) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `h` (an anywhere map of `size` bytes from `buffer_offset`) a fixed one in a new
  // reservation of the sentry's own, sized for it (big pages when the size and offset allow).
  abi::NvError ReserveOwn(pid_t tid, uint64_t size, uint64_t buffer_offset,
                          abi::l4t::nvgpu_as::MapBufferEx* h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The host's UNMAP_BUFFER of `va`, then the FREE_SPACE of its own reservation if it has one.
  HostCallResult UnmapOnHost(pid_t tid, uint64_t va, bool own_reservation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the mapping at `it` (the host already unmapped it); `notify` tells the object.
  void Forget(absl::btree_map<uint64_t, Mapping>::iterator it, bool notify)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Whether [va, va + size) meets the hidden zone (which holds the private window).
  bool InZone(uint64_t va, uint64_t size) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fixed ALLOC_SPACE of `a` meeting the zone: the host's answer to the same request at the
  // zone's end (beyond the space), so the guest reads it as "outside the space".
  abi::NvError OutsideAnswer(pid_t tid, const abi::nvhost_as_gpu::AllocSpace& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const UniqueFd fd_;
  BudgetAccount* const budget_;
  const HostNote note_;
  mutable absl::Mutex submit_mu_;  // SubmitHold; taken before mu_
  mutable absl::Mutex mu_;
  absl::btree_map<uint64_t, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<uint64_t, Reservation> reservations_ ABSL_GUARDED_BY(mu_);
  uint64_t window_ ABSL_GUARDED_BY(mu_) = 0;                                    // its VA; 0: none
  uint64_t zone_ ABSL_GUARDED_BY(mu_) = 0, zone_end_ ABSL_GUARDED_BY(mu_) = 0;  // [zone_, end)
  uint32_t window_page_ ABSL_GUARDED_BY(mu_) = 0;
  // The rest of the zone, reserved on the host beside the window (their VAs).
  std::vector<uint64_t> zone_fill_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<uint64_t, uint64_t> private_ ABSL_GUARDED_BY(mu_);  // va -> size, in the window
};

}  // namespace nvsentry::hostshim::host
