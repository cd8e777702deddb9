// Best-effort speed-up for the GPU's access to guest memory. process_vm_readv/writev pin every
// 4 KiB page they touch, which costs several times the copy itself; a pinned range backed by
// transparent huge pages copies at close to memcpy speed. After ALLOC pins a large range, this
// asks the kernel to collapse it to huge pages (GuestProcess::CollapseHugePages) on its own
// thread, so that ALLOC never waits for it. The guest sees the same bytes. Once the kernel
// refuses for lack of privilege or support, it stops trying. The queue is bounded: requests
// beyond it are dropped (nothing depends on them).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "hostshim/sim/memory/guest_process.h"

namespace nvsentry::hostshim::sim {

class HugePageAdvisor {
 public:
  static constexpr uint64_t kMinBytes = 4ull << 20;  // smaller ranges gain too little
  static constexpr size_t kMaxPending = 64;

  HugePageAdvisor() = default;
  ~HugePageAdvisor();
  HugePageAdvisor(const HugePageAdvisor&) = delete;
  HugePageAdvisor& operator=(const HugePageAdvisor&) = delete;

  void Advise(std::shared_ptr<GuestProcess> process, uint64_t addr, uint64_t len);
  // Requests handled so far (for tests).
  uint64_t done() const;

 private:
  struct Request {
    std::shared_ptr<GuestProcess> process;
    uint64_t addr, len;
  };
  void Run();
  bool Ready() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); }
  mutable absl::Mutex mu_;
  std::deque<Request> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool disabled_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // started on the first request
};

}  // namespace nvsentry::hostshim::sim
