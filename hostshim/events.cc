#include "hostshim/events.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace nvsentry::hostshim {

EventSet::~EventSet() {
  if (budget_ != nullptr && !fds_.empty()) budget_->Release(BudgetKind::kOpenFds, fds_.size());
}

int EventSet::Get(uint32_t id) {
  absl::MutexLock l(&mu_);
  if (auto it = fds_.find(id); it != fds_.end()) return it->second.get();
  if (budget_ != nullptr && budget_->Charge(BudgetKind::kOpenFds) != abi::NvError::kSuccess)
    return -ENOMEM;
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (budget_ != nullptr) budget_->Release(BudgetKind::kOpenFds);
    return -err;
  }
  fds_[id].Reset(fd);
  return fd;
}

void EventSet::Close(uint32_t id) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(id);
  if (it == fds_.end()) return;
  fds_.erase(it);  // closes it
  if (budget_ != nullptr) budget_->Release(BudgetKind::kOpenFds);
}

void EventSet::Signal(uint32_t id) {
  absl::MutexLock l(&mu_);
  if (auto it = fds_.find(id); it != fds_.end()) {
    uint64_t one = 1;
    (void)!write(it->second.get(), &one, sizeof one);
  }
}

bool EventSet::Clear(uint32_t id) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(id);
  if (it == fds_.end()) return false;
  uint64_t v;
  return read(it->second.get(), &v, sizeof v) == sizeof v;
}

size_t EventSet::size() const {
  absl::MutexLock l(&mu_);
  return fds_.size();
}

}  // namespace nvsentry::hostshim
