#include "hostshim/sim/memory/nvmap_hugepages.h"

#include <cerrno>

#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {

HugePageAdvisor::~HugePageAdvisor() {
  {
    absl::MutexLock l(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void HugePageAdvisor::Advise(std::shared_ptr<GuestProcess> process, uint64_t addr, uint64_t len) {
  if (len < kMinBytes || process == nullptr) return;
  absl::MutexLock l(&mu_);
  if (disabled_ || stop_ || queue_.size() >= kMaxPending) return;
  queue_.push_back({std::move(process), addr, len});
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }
}

uint64_t HugePageAdvisor::done() const {
  absl::MutexLock l(&mu_);
  return done_;
}

void HugePageAdvisor::Run() {
  for (;;) {
    Request r;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &HugePageAdvisor::Ready));
      if (stop_) return;
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    const int err = r.process->CollapseHugePages(r.addr, r.len);
    absl::MutexLock l(&mu_);
    ++done_;
    if (err == EPERM || err == ENOSYS) {
      // Not this sentry's to do (no CAP_SYS_NICE, or no process_madvise): stop asking.
      if (!disabled_)
        spdlog::info(
            "nvmap: guest memory stays in 4 KiB pages (process_madvise: errno {}); "
            "large GPU copies are slower",
            err);
      disabled_ = true;
      queue_.clear();
    }
  }
}

}  // namespace nvsentry::hostshim::sim
