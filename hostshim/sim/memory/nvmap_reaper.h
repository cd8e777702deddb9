// The nvmap reaper: one thread that waits (epoll) on the pidfds of nvmap's client processes and
// reports each exit once, so a guest that forks many short-lived processes cannot leave objects
// behind. The thread starts with the first Watch. The callback runs on the reaper thread with no
// lock of the watcher held; it may call Watch/Unwatch. Destruction stops the thread and waits for
// a running callback to return.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::sim {

class ExitWatcher {
 public:
  // `on_exit(cookie)` is called once per Watch whose process exits (until Unwatch).
  explicit ExitWatcher(std::function<void(uint64_t cookie)> on_exit);
  ~ExitWatcher();
  ExitWatcher(const ExitWatcher&) = delete;
  ExitWatcher& operator=(const ExitWatcher&) = delete;

  // False if the epoll set could not be made (then nothing is ever watched nor reported).
  bool ready() const { return ready_; }
  // `pidfd` must stay open until Unwatch (or until its exit was reported).
  bool Watch(int pidfd, uint64_t cookie);
  void Unwatch(int pidfd);

 private:
  void Run();
  std::function<void(uint64_t)> on_exit_;
  UniqueFd epfd_;
  UniqueFd stopfd_;  // eventfd: written by the destructor
  bool ready_ = false;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Watch
};

}  // namespace nvsentry::hostshim::sim
