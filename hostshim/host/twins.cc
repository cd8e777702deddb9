#include "hostshim/host/twins.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace nvsentry::hostshim::host {
namespace {

// The guest's side of an object: its own memory, through the sim object's accessors.
class GuestSide : public ObjectSide {
 public:
  explicit GuestSide(sim::NvmapObject& o) : o_(o) {}
  absl::Status Read(uint64_t offset, std::span<uint8_t> out) override {
    if (o_.Read(offset, out)) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("nvmap object ", o_.id(), ": guest memory gone"));
  }
  absl::Status Write(uint64_t offset, std::span<const uint8_t> data) override {
    if (o_.Write(offset, data)) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("nvmap object ", o_.id(), ": guest memory gone"));
  }
  // The pages of the object the guest's process touched (its page tables), unless the twins
  // compare everything (Twins::set_full_compare) or the kernel will not tell.
  std::optional<std::vector<ObjectSide::Interval>> Touched() override {
    return TouchedIn({0, o_.size()});
  }
  std::optional<std::vector<ObjectSide::Interval>> TouchedIn(ObjectSide::Interval w) override {
    if (full_compare_) return std::nullopt;
    const uint64_t base = o_.attributes().guest_addr;
    std::shared_ptr<sim::GuestProcess> p = o_.guest_process();
    if (p == nullptr || base == 0) return std::nullopt;  // sentry memory: compared whole
    // Whole pages around `w`, clipped to it after.
    const uint64_t page = ObjectMirror::kPage;
    const uint64_t from = w.begin / page * page;
    const uint64_t to = std::min<uint64_t>(o_.size(), (w.end + page - 1) / page * page);
    auto r = p->TouchedPages(base + from, to - from);
    if (!r) return std::nullopt;
    std::vector<ObjectSide::Interval> out;
    out.reserve(r->size());
    for (const sim::GuestProcess::Range& g : *r) {
      const uint64_t b = std::max(g.begin - base, w.begin), e = std::min(g.end - base, w.end);
      if (b < e) out.push_back({b, e});
    }
    return out;
  }
  bool full_compare_ = false;

 private:
  sim::NvmapObject& o_;
};

class HostSide : public ObjectSide {
 public:
  HostSide(HostNvmap& h, uint32_t handle) : h_(h), handle_(handle) {}
  absl::Status Read(uint64_t offset, std::span<uint8_t> out) override {
    return h_.Read(handle_, offset, out);
  }
  absl::Status Write(uint64_t offset, std::span<const uint8_t> data) override {
    return h_.Write(handle_, offset, data);
  }

 private:
  HostNvmap& h_;
  uint32_t handle_;
};

}  // namespace

bool Twins::PageCharges::Take(uint64_t bytes) {
  if (account == nullptr) return true;
  absl::MutexLock l(&mu);
  if (owed != 0) {  // what pulls kept past the limit is paid first
    if (account->Charge(BudgetKind::kTwinBytes, owed) != abi::NvError::kSuccess) return false;
    owed = 0;
  }
  return account->Charge(BudgetKind::kTwinBytes, bytes) == abi::NvError::kSuccess;
}

void Twins::PageCharges::Force(uint64_t bytes) {
  if (account == nullptr) return;
  absl::MutexLock l(&mu);
  if (account->Charge(BudgetKind::kTwinBytes, bytes) != abi::NvError::kSuccess) owed += bytes;
}

void Twins::PageCharges::Give(uint64_t bytes) {
  if (account == nullptr) return;
  absl::MutexLock l(&mu);
  const uint64_t from_owed = std::min(owed, bytes);
  owed -= from_owed;
  if (bytes > from_owed) account->Release(BudgetKind::kTwinBytes, bytes - from_owed);
}

Twins::~Twins() {
  absl::MutexLock l(&mu_);
  for (auto& [_, t] : twins_) host_.Free(t->handle);
}

absl::StatusOr<uint32_t> Twins::HandleOf(const std::shared_ptr<sim::NvmapObject>& object) {
  Sweep();
  {
    absl::MutexLock l(&mu_);
    if (auto it = twins_.find(object.get());
        it != twins_.end() && it->second->object.lock() == object)
      return it->second->handle;
  }
  const sim::NvmapObject::Attributes attr = object->attributes();
  if (!attr.allocated) return absl::FailedPreconditionError("nvmap object has no memory yet");
  auto fd_charge = std::make_unique<BudgetHold>();
  if (!fd_charge->Take(budget_, BudgetKind::kOpenFds))
    return absl::ResourceExhaustedError("open_fds: each host object is an fd of the sentry's");
  absl::StatusOr<uint32_t> handle = host_.Make(object->size(), attr);
  if (!handle.ok()) return handle.status();
  auto twin = std::make_shared<Twin>(object, *handle, object->size(), &page_charges_);
  twin->fd_charge = std::move(fd_charge);  // held as long as the twin
  SyncCounts c;
  if (absl::Status s = SyncOne(*twin, *object, Direction::kPush, &c); !s.ok()) {
    host_.Free(*handle);
    return s;
  }
  absl::MutexLock l(&mu_);
  auto [it, added] = twins_.emplace(object.get(), twin);
  if (!added) {  // another call made one meanwhile: keep the first
    host_.Free(*handle);
    return it->second->handle;
  }
  return *handle;
}

absl::Status Twins::SyncOne(Twin& t, sim::NvmapObject& object, Direction d, SyncCounts* c,
                            std::optional<std::span<const ObjectSide::Interval>> where) {
  GuestSide guest(object);
  guest.full_compare_ = full_compare_.load(std::memory_order_relaxed);
  HostSide host(host_, t.handle);
  absl::MutexLock l(&t.mu);
  absl::StatusOr<SyncCounts> r = d == Direction::kPush ? (where ? t.mirror.Push(guest, host, *where)
                                                                : t.mirror.Push(guest, host))
                                 : where               ? t.mirror.Pull(guest, host, *where)
                                                       : t.mirror.Pull(guest, host);
  if (!r.ok()) return r.status();
  c->bytes_read += r->bytes_read;
  c->bytes_moved += r->bytes_moved;
  c->writes += r->writes;
  return absl::OkStatus();
}

absl::StatusOr<TwinCounts> Twins::PushAll() { return SyncAll(Direction::kPush); }
absl::StatusOr<TwinCounts> Twins::PushAll(const SyncPlan& plan) {
  return SyncAll(Direction::kPush, plan.everything ? nullptr : &plan);
}
absl::StatusOr<TwinCounts> Twins::PullAll() { return SyncAll(Direction::kPull); }
absl::StatusOr<TwinCounts> Twins::PullAll(const SyncPlan& plan) {
  return SyncAll(Direction::kPull, plan.everything ? nullptr : &plan);
}

absl::StatusOr<TwinCounts> Twins::SyncAll(Direction d, const SyncPlan* plan) {
  Sweep();  // a freed object's twin goes at the next sync, not only at the next new twin
  std::vector<std::shared_ptr<Twin>> all;
  {
    absl::MutexLock l(&mu_);
    all.reserve(twins_.size());
    for (auto& [_, t] : twins_) all.push_back(t);
  }
  TwinCounts counts;
  for (const std::shared_ptr<Twin>& t : all) {
    std::shared_ptr<sim::NvmapObject> object = t->object.lock();
    if (object == nullptr) continue;  // freed: Sweep drops it
    std::optional<std::span<const ObjectSide::Interval>> where;
    if (plan != nullptr) {
      where = plan->Of(object.get());
      if (where->empty()) continue;  // nothing of it the GPU may have written
    }
    absl::Status s = SyncOne(*t, *object, d, &counts.moved, where);
    if (!s.ok()) {
      // The guest's memory behind a live object went away (it unmapped what the object names):
      // the twin keeps what it last held, as a real nvmap's pinned pages outlive the guest's
      // mapping of them, and the rest of the guest's objects still move; a pull has nothing to
      // write to. Only the host failing stops a push: the submission then answers its error.
      if (d == Direction::kPush && s.code() != absl::StatusCode::kDataLoss) return s;
      ++counts.skipped;
      continue;
    }
    ++counts.twins;
  }
  return counts;
}

std::shared_ptr<Twins::Twin> Twins::Find(const sim::NvmapObject& object) {
  absl::MutexLock l(&mu_);
  auto it = twins_.find(&object);
  if (it == twins_.end() || it->second->object.lock().get() != &object) return nullptr;
  return it->second;
}

absl::Status Twins::ReadAgreed(const sim::NvmapObject& object, uint64_t offset,
                               std::span<uint8_t> out) {
  std::shared_ptr<Twin> twin = Find(object);
  if (twin == nullptr) return absl::NotFoundError("no twin");
  absl::MutexLock l(&twin->mu);
  return twin->mirror.ReadAgreed(offset, out);
}

void Twins::Sweep() {
  std::vector<uint32_t> gone;
  {
    absl::MutexLock l(&mu_);
    for (auto it = twins_.begin(); it != twins_.end();) {
      if (it->second->object.expired()) {
        gone.push_back(it->second->handle);
        twins_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (uint32_t h : gone) host_.Free(h);
}

size_t Twins::size() const {
  absl::MutexLock l(&mu_);
  return twins_.size();
}

}  // namespace nvsentry::hostshim::host
