// nvmap on the simulated GPU: the driver-wide table of memory objects and the handle tables of
// the guest processes that use them.
//
// Model (docs/simulated-gpu.md): an object has a global id (GET_ID); a handle is the object's id
// as held by one client, and a client is one guest process (like nvservices' per-process nvmap
// clients), so every nvmap fd of a process sees the same handles and a handle means nothing in
// another process until FROM_ID duplicates it there (permission bits 9 and 12). Each client
// counts its duplicates of a handle; FREE drops one, and when the last reference anywhere goes
// the object's memory is released and every GPU mapping of it is forced out.
//
// Memory: ALLOC with a guest address backs the object with the guest's own pages (pinned: the
// range is recorded and charged to pinned_bytes); without one, with sentry memory charged to
// transfer_memory. CREATE charges nvmap_objects. All three go back when the last handle goes.
// Each client holds a pidfd of its process (exit watch), charged to open_fds while it exists.
//
// Answers where Switchbrew is silent: a bad, unknown or foreign handle is BadValue (FREE of one is
// never a success); CREATE of 0 or of more than 0xFFFFF000 bytes is BadValue; a second ALLOC is
// InsufficientMemory (one public emulator's answer; silently keeping the first memory would hide
// the guest's mistake); ALLOC's address not 4 KiB aligned is BadParameter, a range not mapped in
// the caller is InvalidAddress; PARAM BASE and unknown selectors are BadParameter, COMPR is 0;
// FROM_ID of another process's object without the rights is AccessDenied (the one place that
// decides it: the engine passes FROM_ID on under every mask); IS_OWNED_BY_ARUID is
// Success for the guest's own aruid or an exported one, else AccessDenied. Clients exist only
// while they hold handles; a process that exits loses them (reaper thread, nvmap_reaper.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abi/nverror.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/sim/memory/guest_process.h"
#include "hostshim/sim/memory/guest_read_batch.h"
#include "hostshim/sim/memory/mapping_registry.h"

namespace nvsentry::hostshim::sim {

// Something that maps objects into GPU address space (an address space): told when an object it
// maps goes away so that it drops the mapping.
class MappingOwner {
 public:
  virtual ~MappingOwner() = default;
  // The object behind the mapping at `va` is being freed: remove the mapping (no call back into
  // the object is made from here).
  virtual void ForceUnmap(uint64_t va) = 0;
};

class NvmapObject {
 public:
  // An object without memory and without budget charges (Nvmap makes the real ones).
  NvmapObject(uint32_t id, uint64_t size) : id_(id), size_(size) {}
  ~NvmapObject();
  NvmapObject(const NvmapObject&) = delete;
  NvmapObject& operator=(const NvmapObject&) = delete;
  uint32_t id() const { return id_; }
  uint64_t size() const { return size_; }  // CREATE's size rounded up to 4 KiB

  struct Attributes {
    bool allocated = false;
    uint32_t heapmask = 0;
    uint32_t flags = 0;  // ALLOC's flags (bit 1 uncached: FREE reports it)
    uint32_t align = 0;
    uint8_t kind = 0;
    uint64_t guest_addr = 0;  // 0: sentry memory (or not allocated)
    pid_t pid = -1;           // the process whose memory backs it, -1 for sentry memory
  };
  Attributes attributes() const;
  // The process whose memory backs the object; null for sentry memory or none.
  std::shared_ptr<GuestProcess> guest_process() const;

  // GPU access: false when [offset, offset+len) is outside the object, the object has no memory
  // (not allocated, or freed), or the guest pages behind it are gone. Thread-safe; the lock is
  // held only to take a reference to the memory, never across the copy.
  bool Read(uint64_t offset, std::span<uint8_t> dst) const;
  bool Write(uint64_t offset, std::span<const uint8_t> src) const;
  // Read as part of a batch: sentry memory is copied now, a read of guest memory is added to
  // `batch` (made by its Run). False when Read would fail without touching guest memory.
  bool ReadInto(GuestReadBatch* batch, uint64_t offset, std::span<uint8_t> dst) const;

  // Mapping bookkeeping for the address spaces (each mapping pins the object). AddMapping returns
  // false (and records nothing) once the object's last handle has been freed: the caller must
  // not keep the mapping. RemoveMapping drops one record of (owner, va); unknown ones are ignored.
  // Both are logarithmic in the owner's records (mapping_registry.h). RemoveOwner drops every
  // record of an owner at once (an address space that dies).
  bool AddMapping(std::weak_ptr<MappingOwner> owner, uint64_t va);
  void RemoveMapping(const MappingOwner* owner, uint64_t va);
  void RemoveOwner(const MappingOwner* owner);
  size_t mapping_count() const;

 private:
  friend class Nvmap;
  struct SentryMemory;  // mmap'ed, lazily zeroed pages (nvmap_object.cc)
  // What the object's memory is right now: guest pages (process, guest_addr) or sentry memory.
  struct Backing {
    std::shared_ptr<GuestProcess> process;
    std::shared_ptr<SentryMemory> memory;
    uint64_t guest_addr;
  };
  Backing CurrentBacking() const;

  // Nvmap's side. Begin/FinishAlloc bracket the slow part of ALLOC (range check, budget) so
  // that no Nvmap lock is held meanwhile; Retire is the free of the last handle.
  abi::NvError BeginAlloc();
  // Takes ownership of the charge: on false (retired meanwhile) the charge is already released.
  bool FinishAlloc(const Attributes& attr, std::shared_ptr<GuestProcess> process,
                   std::shared_ptr<SentryMemory> memory, BudgetAccount* budget,
                   BudgetKind charged_kind, uint64_t charged);
  void AbortAlloc();
  // Detaches the memory, releases its budget and returns the mappings to force out.
  MappingRegistry Retire();
  static std::shared_ptr<SentryMemory> MakeSentryMemory(uint64_t size);

  const uint32_t id_;
  const uint64_t size_;
  mutable absl::Mutex mu_;
  Attributes attr_ ABSL_GUARDED_BY(mu_);
  bool allocating_ ABSL_GUARDED_BY(mu_) = false;
  bool retired_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<GuestProcess> process_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<SentryMemory> sentry_memory_ ABSL_GUARDED_BY(mu_);
  MappingRegistry mappings_ ABSL_GUARDED_BY(mu_);
  // Where the pinned/transfer bytes were charged (released by Retire or the destructor).
  BudgetAccount* budget_ ABSL_GUARDED_BY(mu_) = nullptr;
  BudgetKind charged_kind_ ABSL_GUARDED_BY(mu_) = BudgetKind::kPinnedBytes;
  uint64_t charged_ ABSL_GUARDED_BY(mu_) = 0;
};

// A pin, as DumpStatus and the trace report it: which process's memory an object holds.
struct PinInfo {
  uint32_t id;
  pid_t pid;  // -1: sentry memory
  uint64_t guest_addr;
  uint64_t size;
  size_t mappings;
};

class ExitWatcher;
class HugePageAdvisor;

class Nvmap {
 public:
  // `budget` outlives this; `permission_mask` gives FROM_ID's rights (bits 9, 12) and the ARUID
  // exports (bit 14, enforced before the call reaches here); `aruid` is the guest's own.
  // Starts the reaper thread that releases the clients of exited processes.
  Nvmap(BudgetAccount* budget, uint32_t permission_mask, uint64_t aruid);
  ~Nvmap();
  Nvmap(const Nvmap&) = delete;
  Nvmap& operator=(const Nvmap&) = delete;

  // The object behind `handle` in process `tgid`'s client, or null (no such handle there).
  std::shared_ptr<NvmapObject> Resolve(pid_t tgid, uint32_t handle) const;

  // The ioctls, on the caller's client (NvmapDevice copies the arguments in and out). A tgid
  // that is not a live process is BadParameter.
  abi::NvError Create(pid_t tgid, uint32_t size, uint32_t* handle);
  abi::NvError FromId(pid_t tgid, uint32_t id, uint32_t* handle);
  abi::NvError Alloc(pid_t tgid, uint32_t handle, uint32_t heapmask, uint32_t flags,
                     uint32_t* align, uint8_t kind, uint64_t addr);
  abi::NvError Free(pid_t tgid, uint32_t handle, uint64_t* address, uint32_t* size,
                    uint32_t* flags);
  abi::NvError Param(pid_t tgid, uint32_t handle, uint32_t param, uint32_t* result) const;
  abi::NvError GetId(pid_t tgid, uint32_t handle, uint32_t* id) const;
  abi::NvError ExportForAruid(pid_t tgid, uint32_t handle, uint64_t aruid);
  abi::NvError IsOwnedByAruid(pid_t tgid, uint32_t handle, uint64_t aruid) const;
  abi::NvError RemoveExportForAruid(pid_t tgid, uint32_t handle, uint64_t aruid);

  // Drops every handle process `tgid` holds (it exited); objects nobody else holds are freed.
  void ReleaseClient(pid_t tgid);

  std::vector<PinInfo> Pins() const;
  size_t object_count() const;
  size_t client_count() const;

  // Limits that keep one guest from growing the sentry without bound.
  static constexpr size_t kMaxExportsPerObject = 64;
  static constexpr uint32_t kMaxDuplicates = 0x7FFFFFFF;  // per handle per client

 private:
  struct Client {
    std::shared_ptr<GuestProcess> process;
    uint32_t serial = 0;                           // tells a reused tgid's client apart
    absl::flat_hash_map<uint32_t, uint32_t> dups;  // handle (= id) -> duplicate count
  };
  struct Entry {
    std::shared_ptr<NvmapObject> object;
    uint64_t refs = 0;                                // duplicates over all clients
    std::shared_ptr<GuestProcess> creator;            // the process that made it (CREATE)
    absl::flat_hash_map<uint64_t, bool> exported_to;  // aruids (EXPORT_FOR_ARUID)
  };
  using Dead = std::vector<std::shared_ptr<NvmapObject>>;
  // The caller's client, made on first use; null with *why BadParameter when the process is
  // gone, InsufficientMemory when its pidfd would pass open_fds. A client left by an exited
  // process whose tgid was reused is dropped first (its freed objects go to `dead`).
  Client* ClientFor(pid_t tgid, Dead* dead, abi::NvError* why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops a client's handles (objects nobody else holds go to `dead`), stops watching its pidfd.
  void DropClient(pid_t tgid, Dead* dead) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets a client that holds no handle (clients exist only while they hold something).
  void PruneClient(pid_t tgid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry behind a handle the live process `tgid` holds, or null.
  const Entry* Held(pid_t tgid, uint32_t handle) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  Entry* Held(pid_t tgid, uint32_t handle) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint32_t NextId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes an entry whose last reference went; the caller retires the object outside mu_.
  std::shared_ptr<NvmapObject> DropEntry(uint32_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Called without mu_: retires the objects and forces their mappings out.
  static void Finish(const Dead& dead);
  void ReleaseClientIf(pid_t tgid, uint32_t serial);

  BudgetAccount* const budget_;
  const uint32_t permission_mask_;
  const uint64_t aruid_;
  mutable absl::Mutex mu_;
  uint32_t next_id_ ABSL_GUARDED_BY(mu_) = 4;
  uint32_t next_serial_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint32_t, Entry> objects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<pid_t, Client> clients_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ExitWatcher> reaper_;  // set in the constructor, reset first in ~Nvmap
  std::unique_ptr<HugePageAdvisor> hugepages_;
};

}  // namespace nvsentry::hostshim::sim
