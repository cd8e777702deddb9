// Nvmap: the object table, the per-process handle tables and the reaper that empties the tables
// of exited processes.
//
// Locks: Nvmap::mu_ is never held while calling an object's memory or mapping methods, a
// MappingOwner, or a GuestProcess copy. It may be held while taking BudgetAccount's lock and
// while calling ExitWatcher::Watch/Unwatch (plain epoll_ctl, no callback); the reaper thread
// calls back into Nvmap with no lock of its own held.
#include "hostshim/sim/memory/nvmap.h"

#include <algorithm>

#include "abi/permissions.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/memory/nvmap_hugepages.h"
#include "hostshim/sim/memory/nvmap_reaper.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {
namespace {

using abi::NvError;
constexpr uint64_t kPage = 4096;
// CREATE's u32 size rounded up must still fit the u32 fields of FREE and PARAM.
constexpr uint32_t kMaxCreateSize = 0xFFFFF000;
constexpr uint32_t kAllocFlagUncached = 1u << 1;  // ALLOC's flags bit 1
constexpr uint32_t kFreeFlagWasUncached = 1;      // FREE's flags value (Switchbrew)
constexpr uint32_t kHeapIovmm = 0x40000000;       // PARAM HEAP once allocated

uint64_t Cookie(pid_t tgid, uint32_t serial) {
  return (uint64_t{serial} << 32) | static_cast<uint32_t>(tgid);
}

}  // namespace

Nvmap::Nvmap(BudgetAccount* budget, uint32_t permission_mask, uint64_t aruid)
    : budget_(budget),
      permission_mask_(permission_mask),
      aruid_(aruid),
      hugepages_(std::make_unique<HugePageAdvisor>()) {
  reaper_ = std::make_unique<ExitWatcher>([this](uint64_t cookie) {
    ReleaseClientIf(static_cast<pid_t>(static_cast<uint32_t>(cookie)),
                    static_cast<uint32_t>(cookie >> 32));
  });
}

Nvmap::~Nvmap() {
  reaper_.reset();  // no callback runs after this
  hugepages_.reset();
  Dead dead;
  {
    absl::MutexLock l(&mu_);
    for (auto& [id, e] : objects_) {
      dead.push_back(std::move(e.object));
      budget_->Release(BudgetKind::kNvmapObjects);
    }
    objects_.clear();
    clients_.clear();
  }
  Finish(dead);
}

void Nvmap::Finish(const Dead& dead) {
  for (const auto& obj : dead) {
    // Outside every lock: the owners take their own locks to drop the mapping.
    obj->Retire().ForEach([](const std::weak_ptr<MappingOwner>& o, uint64_t va) {
      if (auto owner = o.lock()) owner->ForceUnmap(va);
    });
  }
}

uint32_t Nvmap::NextId() {
  // Ids stay multiples of 4 and skip 0; a live id is never handed out twice. The budget keeps
  // the live count far below 2^30, so the loop ends.
  for (;;) {
    const uint32_t id = next_id_;
    next_id_ += 4;
    if (next_id_ == 0) next_id_ = 4;
    if (!objects_.contains(id)) return id;
  }
}

Nvmap::Client* Nvmap::ClientFor(pid_t tgid, Dead* dead, NvError* why) {
  if (tgid <= 0) {
    *why = NvError::kBadParameter;
    return nullptr;
  }
  if (auto it = clients_.find(tgid); it != clients_.end()) {
    if (it->second.process->Alive()) return &it->second;
    DropClient(tgid, dead);  // the exited owner of a reused tgid; the reaper has not run yet
  }
  NvError refused = NvError::kBadParameter;  // unless the budget says otherwise
  auto process = GuestProcess::Open(tgid, budget_, &refused);
  if (process == nullptr) {
    *why = refused;
    return nullptr;
  }
  uint32_t serial = next_serial_++;
  if (serial == 0) serial = next_serial_++;
  if (reaper_ && !reaper_->Watch(process->pidfd(), Cookie(tgid, serial)))
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "nvmap: cannot watch process {} for exit; its handles stay until freed", tgid);
  Client& c = clients_[tgid];
  c.process = std::move(process);
  c.serial = serial;
  return &c;
}

void Nvmap::DropClient(pid_t tgid, Dead* dead) {
  auto it = clients_.find(tgid);
  if (it == clients_.end()) return;
  for (const auto& [handle, n] : it->second.dups) {
    auto e = objects_.find(handle);
    if (e == objects_.end()) continue;
    e->second.refs -= std::min<uint64_t>(e->second.refs, n);
    if (e->second.refs == 0) dead->push_back(DropEntry(handle));
  }
  if (reaper_) reaper_->Unwatch(it->second.process->pidfd());
  clients_.erase(it);
}

void Nvmap::PruneClient(pid_t tgid) {
  auto it = clients_.find(tgid);
  if (it == clients_.end() || !it->second.dups.empty()) return;
  if (reaper_) reaper_->Unwatch(it->second.process->pidfd());
  clients_.erase(it);
}

std::shared_ptr<NvmapObject> Nvmap::DropEntry(uint32_t id) {
  auto it = objects_.find(id);
  if (it == objects_.end()) return nullptr;
  auto obj = std::move(it->second.object);
  objects_.erase(it);
  budget_->Release(BudgetKind::kNvmapObjects);
  return obj;
}

const Nvmap::Entry* Nvmap::Held(pid_t tgid, uint32_t handle) const {
  auto c = clients_.find(tgid);
  if (c == clients_.end() || !c->second.dups.contains(handle)) return nullptr;
  // A process that exited (and whose tgid may already name another) holds nothing.
  if (!c->second.process->Alive()) return nullptr;
  auto e = objects_.find(handle);
  return e == objects_.end() ? nullptr : &e->second;
}

Nvmap::Entry* Nvmap::Held(pid_t tgid, uint32_t handle) {
  return const_cast<Entry*>(std::as_const(*this).Held(tgid, handle));
}

std::shared_ptr<NvmapObject> Nvmap::Resolve(pid_t tgid, uint32_t handle) const {
  absl::ReaderMutexLock l(&mu_);
  const Entry* e = Held(tgid, handle);
  return e ? e->object : nullptr;
}

NvError Nvmap::Create(pid_t tgid, uint32_t size, uint32_t* handle) {
  if (tgid <= 0) return NvError::kBadParameter;
  if (size == 0 || size > kMaxCreateSize) return NvError::kBadValue;
  const uint64_t rounded = (uint64_t{size} + kPage - 1) & ~(kPage - 1);
  Dead dead;
  NvError err = NvError::kSuccess;
  {
    absl::MutexLock l(&mu_);
    Client* c = ClientFor(tgid, &dead, &err);  // null: err says why
    if (c != nullptr && (err = budget_->Charge(BudgetKind::kNvmapObjects)) != NvError::kSuccess) {
      PruneClient(tgid);
    } else if (c != nullptr) {
      const uint32_t id = NextId();
      Entry& e = objects_[id];
      e.object = std::make_shared<NvmapObject>(id, rounded);
      e.refs = 1;
      e.creator = c->process;
      c->dups[id] = 1;
      *handle = id;
    }
  }
  Finish(dead);
  return err;
}

NvError Nvmap::FromId(pid_t tgid, uint32_t id, uint32_t* handle) {
  if (tgid <= 0) return NvError::kBadParameter;
  Dead dead;
  NvError err = NvError::kSuccess;
  {
    absl::MutexLock l(&mu_);
    auto e = objects_.find(id);
    Client* c = nullptr;
    if (id == 0 || e == objects_.end()) {
      err = NvError::kBadValue;
    } else if ((c = ClientFor(tgid, &dead, &err)) == nullptr) {
      // err says why
    } else {
      Entry& entry = e->second;
      auto d = c->dups.find(id);
      // Same process: it holds the handle already, or made the object (a live creator with the
      // caller's pid is the caller: a pid is not reused while its process lives).
      const bool own = d != c->dups.end() ||
                       (entry.creator && entry.creator->pid() == tgid && entry.creator->Alive());
      const abi::Permissions may(permission_mask_);
      const bool any = may.MayImportAnyObject();
      const bool exported = may.MayImportExportedObject() && entry.exported_to.contains(aruid_);
      if (!own && !any && !exported) {
        err = NvError::kAccessDenied;
      } else if (d != c->dups.end() && d->second >= kMaxDuplicates) {
        err = NvError::kInsufficientMemory;
      } else {
        ++c->dups[id];
        ++entry.refs;
        *handle = id;
      }
      if (err != NvError::kSuccess) PruneClient(tgid);
    }
  }
  Finish(dead);
  return err;
}

NvError Nvmap::Alloc(pid_t tgid, uint32_t handle, uint32_t heapmask, uint32_t flags,
                     uint32_t* align, uint8_t kind, uint64_t addr) {
  if (tgid <= 0) return NvError::kBadParameter;
  std::shared_ptr<NvmapObject> obj;
  std::shared_ptr<GuestProcess> process;
  {
    absl::ReaderMutexLock l(&mu_);
    const Entry* e = Held(tgid, handle);
    if (handle == 0 || e == nullptr) return NvError::kBadValue;
    obj = e->object;
    process = clients_.find(tgid)->second.process;
  }
  uint32_t a = *align;
  if ((a & (a - 1)) != 0) return NvError::kBadValue;
  a = std::max<uint32_t>(a, kPage);
  const uint64_t size = obj->size();
  if (addr != 0) {
    if ((addr & (kPage - 1)) != 0) return NvError::kBadParameter;
    if (addr + size < addr) return NvError::kInvalidAddress;
  }
  if (NvError err = obj->BeginAlloc(); err != NvError::kSuccess) return err;
  // Slow part (range check, mmap) with no Nvmap lock held; BeginAlloc keeps others out.
  const BudgetKind charge = addr != 0 ? BudgetKind::kPinnedBytes : BudgetKind::kTransferMemory;
  if (NvError err = budget_->Charge(charge, size); err != NvError::kSuccess) {
    obj->AbortAlloc();
    return err;
  }
  std::shared_ptr<NvmapObject::SentryMemory> memory;
  NvError err = NvError::kSuccess;
  if (addr != 0) {
    if (!process->Mapped(addr, size)) err = NvError::kInvalidAddress;
  } else {
    memory = NvmapObject::MakeSentryMemory(size);
    if (memory == nullptr) err = NvError::kInsufficientMemory;
  }
  if (err != NvError::kSuccess) {
    budget_->Release(charge, size);
    obj->AbortAlloc();
    return err;
  }
  NvmapObject::Attributes attr;
  attr.allocated = true;
  attr.heapmask = heapmask;
  attr.flags = flags;
  attr.align = a;
  attr.kind = kind;
  attr.guest_addr = addr;
  attr.pid = addr != 0 ? tgid : -1;
  if (addr == 0) process = nullptr;
  if (process != nullptr) hugepages_->Advise(process, addr, size);
  if (!obj->FinishAlloc(attr, std::move(process), std::move(memory), budget_, charge, size))
    return NvError::kBadValue;  // its last handle was freed meanwhile
  *align = a;
  return NvError::kSuccess;
}

NvError Nvmap::Free(pid_t tgid, uint32_t handle, uint64_t* address, uint32_t* size,
                    uint32_t* flags) {
  if (tgid <= 0) return NvError::kBadParameter;
  Dead dead;
  std::shared_ptr<NvmapObject> obj;
  {
    absl::MutexLock l(&mu_);
    Entry* e = Held(tgid, handle);
    if (handle == 0 || e == nullptr) return NvError::kBadValue;  // never "success" for nothing
    obj = e->object;
    auto& dups = clients_.find(tgid)->second.dups;
    if (--dups[handle] == 0) dups.erase(handle);
    if (--e->refs == 0) dead.push_back(DropEntry(handle));
    PruneClient(tgid);
  }
  const auto attr = obj->attributes();
  *address = dead.empty() ? 0 : attr.guest_addr;
  *size = static_cast<uint32_t>(obj->size());
  *flags = (attr.flags & kAllocFlagUncached) ? kFreeFlagWasUncached : 0;
  Finish(dead);
  return NvError::kSuccess;
}

NvError Nvmap::Param(pid_t tgid, uint32_t handle, uint32_t param, uint32_t* result) const {
  if (tgid <= 0) return NvError::kBadParameter;
  std::shared_ptr<NvmapObject> obj;
  {
    absl::ReaderMutexLock l(&mu_);
    const Entry* e = Held(tgid, handle);
    if (e == nullptr) return NvError::kBadValue;
    obj = e->object;
  }
  const auto attr = obj->attributes();
  switch (param) {
    case 1: *result = static_cast<uint32_t>(obj->size()); return NvError::kSuccess;
    case 2: *result = attr.align; return NvError::kSuccess;
    case 3: return NvError::kBadParameter;  // BASE: no physical address to give
    case 4: *result = attr.allocated ? kHeapIovmm : 0; return NvError::kSuccess;
    case 5: *result = attr.kind; return NvError::kSuccess;
    case 6: *result = 0; return NvError::kSuccess;  // COMPR: nothing is compressed
    default: return NvError::kBadParameter;
  }
}

NvError Nvmap::GetId(pid_t tgid, uint32_t handle, uint32_t* id) const {
  *id = ~0u;
  if (tgid <= 0) return NvError::kBadParameter;
  absl::ReaderMutexLock l(&mu_);
  if (Held(tgid, handle) == nullptr) return NvError::kBadValue;
  *id = handle;
  return NvError::kSuccess;
}

NvError Nvmap::ExportForAruid(pid_t tgid, uint32_t handle, uint64_t aruid) {
  if (tgid <= 0) return NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  Entry* e = Held(tgid, handle);
  if (e == nullptr) return NvError::kBadValue;
  if (!e->exported_to.contains(aruid) && e->exported_to.size() >= kMaxExportsPerObject)
    return NvError::kInsufficientMemory;
  e->exported_to[aruid] = true;
  return NvError::kSuccess;
}

NvError Nvmap::IsOwnedByAruid(pid_t tgid, uint32_t handle, uint64_t aruid) const {
  if (tgid <= 0) return NvError::kBadParameter;
  absl::ReaderMutexLock l(&mu_);
  const Entry* e = Held(tgid, handle);
  if (e == nullptr) return NvError::kBadValue;
  // Every object belongs to the guest's own aruid; others own it only through an export.
  return aruid == aruid_ || e->exported_to.contains(aruid) ? NvError::kSuccess
                                                           : NvError::kAccessDenied;
}

NvError Nvmap::RemoveExportForAruid(pid_t tgid, uint32_t handle, uint64_t aruid) {
  if (tgid <= 0) return NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  Entry* e = Held(tgid, handle);
  if (e == nullptr) return NvError::kBadValue;
  e->exported_to.erase(aruid);  // removing an export that is not there is not an error
  return NvError::kSuccess;
}

void Nvmap::ReleaseClient(pid_t tgid) {
  Dead dead;
  {
    absl::MutexLock l(&mu_);
    DropClient(tgid, &dead);
  }
  Finish(dead);
}

void Nvmap::ReleaseClientIf(pid_t tgid, uint32_t serial) {
  Dead dead;
  {
    absl::MutexLock l(&mu_);
    auto it = clients_.find(tgid);
    if (it == clients_.end() || it->second.serial != serial) return;  // already gone
    DropClient(tgid, &dead);
  }
  if (!dead.empty())
    NVS_LOG_LIMITED(spdlog::level::debug, "nvmap: process {} exited; {} objects freed", tgid,
                    dead.size());
  Finish(dead);
}

std::vector<PinInfo> Nvmap::Pins() const {
  std::vector<std::shared_ptr<NvmapObject>> objs;
  {
    absl::ReaderMutexLock l(&mu_);
    objs.reserve(objects_.size());
    for (const auto& [id, e] : objects_) objs.push_back(e.object);
  }
  std::vector<PinInfo> pins;
  for (const auto& o : objs) {
    const auto a = o->attributes();
    if (!a.allocated) continue;
    pins.push_back({o->id(), a.pid, a.guest_addr, o->size(), o->mapping_count()});
  }
  std::sort(pins.begin(), pins.end(),
            [](const PinInfo& x, const PinInfo& y) { return x.id < y.id; });
  return pins;
}

size_t Nvmap::object_count() const {
  absl::ReaderMutexLock l(&mu_);
  return objects_.size();
}

size_t Nvmap::client_count() const {
  absl::ReaderMutexLock l(&mu_);
  return clients_.size();
}

}  // namespace nvsentry::hostshim::sim
