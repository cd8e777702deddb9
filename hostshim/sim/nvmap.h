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
// transfer_memory. CREATE charges nvmap_objects.
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
#include "hostshim/sim/guest_process.h"

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
  NvmapObject(uint32_t id, uint64_t size) : id_(id), size_(size) {}
  ~NvmapObject();
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

  // GPU access: false when [offset, offset+len) is outside the object, the object has no memory,
  // or the guest pages behind it are gone. Thread-safe; never holds a lock across the copy
  // longer than the copy itself.
  bool Read(uint64_t offset, std::span<uint8_t> dst) const;
  bool Write(uint64_t offset, std::span<const uint8_t> src) const;

  // Mapping bookkeeping for the address spaces (each mapping pins the object).
  void AddMapping(std::weak_ptr<MappingOwner> owner, uint64_t va);
  void RemoveMapping(const MappingOwner* owner, uint64_t va);
  size_t mapping_count() const;

 private:
  friend class Nvmap;
  struct Mapping {
    std::weak_ptr<MappingOwner> owner;
    uint64_t va;
  };
  const uint32_t id_;
  const uint64_t size_;
  mutable absl::Mutex mu_;
  Attributes attr_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<GuestProcess> process_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<uint8_t[]> sentry_memory_ ABSL_GUARDED_BY(mu_);
  std::vector<Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  BudgetAccount* charged_ = nullptr;  // where pinned/transfer bytes were charged (released here)
};

// A pin, as DumpStatus and the trace report it: which process's memory an object holds.
struct PinInfo {
  uint32_t id;
  pid_t pid;  // -1: sentry memory
  uint64_t guest_addr;
  uint64_t size;
  size_t mappings;
};

class Nvmap {
 public:
  // `budget` outlives this; `permission_mask` gives FROM_ID's rights (bits 9, 12) and the ARUID
  // exports (bit 14, enforced before the call reaches here); `aruid` is the guest's own.
  Nvmap(BudgetAccount* budget, uint32_t permission_mask, uint64_t aruid);
  ~Nvmap();

  // The object behind `handle` in process `tgid`'s client, or null (no such handle there).
  std::shared_ptr<NvmapObject> Resolve(pid_t tgid, uint32_t handle) const;

  // The ioctls, on the caller's client (NvmapDevice copies the arguments in and out).
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

 private:
  struct Client {
    absl::flat_hash_map<uint32_t, uint32_t> dups;  // handle (= id) -> duplicate count
  };
  struct Entry {
    std::shared_ptr<NvmapObject> object;
    uint32_t refs = 0;                        // duplicates over all clients
    pid_t creator = -1;
    absl::flat_hash_map<uint64_t, bool> exported_to;  // aruids (EXPORT_FOR_ARUID)
  };
  BudgetAccount* const budget_;
  const uint32_t permission_mask_;
  const uint64_t aruid_;
  mutable absl::Mutex mu_;
  uint32_t next_id_ ABSL_GUARDED_BY(mu_) = 4;
  absl::flat_hash_map<uint32_t, Entry> objects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<pid_t, Client> clients_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::sim
