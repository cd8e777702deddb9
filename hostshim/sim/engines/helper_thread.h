// A short-lived thread that helps the current one (a large DMA copy's second half), started on
// another CPU. A new thread otherwise starts on its creator's CPU and waits there until the
// scheduler moves it: measured on this kind of 2-CPU VM, a median of 2 ms, a third of a 64 MiB
// copy, during which both halves share one CPU. The helper is created with the CPUs this thread
// may use minus the one it is on, and widens its mask back to all of them once it runs, so that a
// CPU that gets busy later does not hold it (a pinned helper would hold up the copy).
//
// If the thread cannot be created, the function is not run: the caller's own share of the work
// must cover everything (as a work queue does).
#pragma once

#include <pthread.h>
#include <sched.h>

#include <functional>
#include <memory>

namespace nvsentry::hostshim::sim {

class HelperThread {
 public:
  explicit HelperThread(std::function<void()> fn);
  ~HelperThread();  // joins
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  bool started() const { return started_; }

 private:
  struct Start {
    std::function<void()> fn;
    cpu_set_t all;
    bool moved = false;
  };
  static void* Main(void* arg);
  std::unique_ptr<Start> start_;
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace nvsentry::hostshim::sim
