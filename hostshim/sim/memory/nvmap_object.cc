// NvmapObject: the memory behind one nvmap object and the GPU mappings that pin it.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {

// Anonymous pages: zero until touched, so a large ALLOC costs nothing until the GPU uses it.
// Shared with in-flight copies so that a free during a copy cannot unmap it under them.
struct NvmapObject::SentryMemory {
  uint8_t* base = nullptr;
  uint64_t size = 0;
  ~SentryMemory() {
    if (base != nullptr) munmap(base, size);
  }
};

std::shared_ptr<NvmapObject::SentryMemory> NvmapObject::MakeSentryMemory(uint64_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto m = std::make_shared<SentryMemory>();
  m->base = static_cast<uint8_t*>(p);
  m->size = size;
  return m;
}

NvmapObject::~NvmapObject() {
  absl::MutexLock l(&mu_);
  if (budget_ != nullptr && charged_ != 0) budget_->Release(charged_kind_, charged_);
}

NvmapObject::Attributes NvmapObject::attributes() const {
  absl::MutexLock l(&mu_);
  return attr_;
}

std::shared_ptr<GuestProcess> NvmapObject::guest_process() const {
  absl::MutexLock l(&mu_);
  return process_;
}

NvmapObject::Backing NvmapObject::CurrentBacking() const {
  absl::MutexLock l(&mu_);
  return {process_, sentry_memory_, attr_.guest_addr};
}

bool NvmapObject::Read(uint64_t offset, std::span<uint8_t> dst) const {
  if (offset > size_ || dst.size() > size_ - offset) return false;
  const Backing b = CurrentBacking();  // references keep it alive through the copy, unlocked
  if (b.process != nullptr) return b.process->Read(b.guest_addr + offset, dst);
  if (b.memory == nullptr) return false;
  if (!dst.empty()) std::memcpy(dst.data(), b.memory->base + offset, dst.size());
  return true;
}

bool NvmapObject::ReadInto(GuestReadBatch* batch, uint64_t offset, std::span<uint8_t> dst) const {
  if (offset > size_ || dst.size() > size_ - offset) return false;
  const Backing b = CurrentBacking();
  // The batch holds the process (and with it the pidfd) until it has read.
  if (b.process != nullptr) {
    batch->Add(b.process, b.guest_addr + offset, dst);
    return true;
  }
  if (b.memory == nullptr) return false;
  if (!dst.empty()) std::memcpy(dst.data(), b.memory->base + offset, dst.size());
  return true;
}

bool NvmapObject::Write(uint64_t offset, std::span<const uint8_t> src) const {
  if (offset > size_ || src.size() > size_ - offset) return false;
  const Backing b = CurrentBacking();
  if (b.process != nullptr) return b.process->Write(b.guest_addr + offset, src);
  if (b.memory == nullptr) return false;
  if (!src.empty()) std::memcpy(b.memory->base + offset, src.data(), src.size());
  return true;
}

bool NvmapObject::AddMapping(std::weak_ptr<MappingOwner> owner, uint64_t va) {
  const MappingOwner* raw = owner.lock().get();
  absl::MutexLock l(&mu_);
  if (retired_) return false;
  mappings_.Add(std::move(owner), raw, va);
  return true;
}

void NvmapObject::RemoveMapping(const MappingOwner* owner, uint64_t va) {
  absl::MutexLock l(&mu_);
  // By address: an owner that calls this from its destructor can no longer be locked.
  mappings_.Remove(owner, va);
}

void NvmapObject::RemoveOwner(const MappingOwner* owner) {
  absl::MutexLock l(&mu_);
  mappings_.RemoveOwner(owner);
}

size_t NvmapObject::mapping_count() const {
  absl::MutexLock l(&mu_);
  return mappings_.size();
}

abi::NvError NvmapObject::BeginAlloc() {
  absl::MutexLock l(&mu_);
  if (retired_) return abi::NvError::kBadValue;
  // One of the two public behaviours: a second ALLOC is refused rather than silently ignored,
  // so a client that thinks it re-backed the object with new memory finds out.
  if (attr_.allocated || allocating_) return abi::NvError::kInsufficientMemory;
  allocating_ = true;
  return abi::NvError::kSuccess;
}

void NvmapObject::AbortAlloc() {
  absl::MutexLock l(&mu_);
  allocating_ = false;
}

bool NvmapObject::FinishAlloc(const Attributes& attr, std::shared_ptr<GuestProcess> process,
                              std::shared_ptr<SentryMemory> memory, BudgetAccount* budget,
                              BudgetKind charged_kind, uint64_t charged) {
  {
    absl::MutexLock l(&mu_);
    allocating_ = false;
    if (!retired_) {
      attr_ = attr;
      process_ = std::move(process);
      sentry_memory_ = std::move(memory);
      budget_ = budget;
      charged_kind_ = charged_kind;
      charged_ = charged;
      return true;
    }
  }
  if (budget != nullptr && charged != 0) budget->Release(charged_kind, charged);
  return false;
}

MappingRegistry NvmapObject::Retire() {
  std::shared_ptr<GuestProcess> process;
  std::shared_ptr<SentryMemory> memory;
  MappingRegistry mappings;
  BudgetAccount* budget;
  uint64_t charged;
  BudgetKind kind;
  {
    absl::MutexLock l(&mu_);
    retired_ = true;
    process = std::move(process_);
    memory = std::move(sentry_memory_);
    std::swap(mappings, mappings_);
    budget = budget_;
    charged = charged_;
    kind = charged_kind_;
    charged_ = 0;
  }
  if (budget != nullptr && charged != 0) budget->Release(kind, charged);
  return mappings;
}

}  // namespace nvsentry::hostshim::sim
