// Notices when the guest thread of a parked call stops waiting for it: a signal the thread would
// take (the call is then answered as an interrupted driver wait) or the thread's death (dropped).
//
// The kernel tells the sentry neither. Once a worker has received a notification the thread
// sleeps killable-only (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV), so a non-fatal signal stays
// pending while the thread sleeps on, and the notification fd reports no per-call event. So the
// watch reads the thread's /proc status: first `first_check` after parking, then at doubling
// intervals up to `max_interval`. Each call keeps its status file open from its first check: a
// re-read costs a fraction of an open, and the file names that very thread (reads fail once it
// is gone, whatever reuses its tid). All reads together may take at most `work_per_period` of
// each `period` (2% of one core by default); with more parked calls than that allows, their
// intervals stretch instead and the cost stays put (docs/architecture.md, "A wait that must
// sleep").
//
// Thread-safe. One thread of its own, started by the first Watch; a watched call's callbacks run
// on it, never under the watch's lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nvsentry::sentry {

// A parked call as the watch sees it.
class WatchedCall {
 public:
  virtual ~WatchedCall() = default;
  // False once the call has ended (answered or dropped).
  virtual bool Waiting() = 0;
  // The kernel still holds the call for its thread (seccomp's ID_VALID). Asked once after the
  // thread's status file was opened (then the file is that thread's), and before every read by
  // path.
  virtual bool StillPending() = 0;
  // The thread would take a signal (thread-directed, or one for its whole process): answer the
  // call as an interrupted driver wait, unless it already ended.
  virtual void Interrupted(bool thread_directed) = 0;
  // The thread is gone: drop the call, unless it already ended.
  virtual void Gone() = 0;
};

// Signals that would interrupt a driver's interruptible wait: pending (for the thread or its
// whole process), neither blocked nor ignored; and whether the task is dead (a zombie, or dying).
struct ThreadSignals {
  uint64_t thread = 0;
  uint64_t process = 0;
  bool dead = false;
};
// Parses the text of /proc/TID/status; false if it lacks the signal lines.
bool ParseThreadStatus(std::string_view text, ThreadSignals* out);
// True when the thread will never return to user space: a zombie, or SIGKILL pending for it or
// its process (a parked call of such a thread is gone, not interrupted).
bool Dying(const ThreadSignals& s);

class ParkWatch {
 public:
  struct Options {
    absl::Duration first_check = absl::Milliseconds(100);
    absl::Duration max_interval = absl::Milliseconds(1600);
    absl::Duration period = absl::Milliseconds(100);
    absl::Duration work_per_period = absl::Milliseconds(2);
  };
  struct Stats {
    uint64_t checks = 0;       // status reads
    uint64_t interrupted = 0;  // calls ended by a pending signal
    uint64_t gone = 0;         // calls ended by their thread's death
  };

  ParkWatch();
  explicit ParkWatch(Options options);
  ~ParkWatch();
  ParkWatch(const ParkWatch&) = delete;
  ParkWatch& operator=(const ParkWatch&) = delete;

  // Watches the call of thread `tid` (in the sentry's PID namespace) until it ends or is
  // forgotten. Cheap: no system call (but the first, which starts the watch's thread). Returns the
  // ticket Forget takes.
  uint64_t Watch(std::weak_ptr<WatchedCall> call, pid_t tid);
  // The call ended: forget it and close its status file.
  void Forget(uint64_t ticket);

  size_t watched() const;
  Stats stats() const;

 private:
  struct Entry {
    std::weak_ptr<WatchedCall> call;
    pid_t tid;
    int fd = -1;            // the thread's status file, from the first check on
    bool by_path = false;   // no fd could be had (the sentry's fd limit): open, read, close
    bool verified = false;  // the kernel confirmed the call pending after the file was opened
    bool checking = false;  // the watch thread is reading it (outside the lock)
    bool forgotten = false;
    absl::Duration interval;
    absl::Time due;
  };
  enum class Verdict { kWaiting, kInterruptedThread, kInterruptedProcess, kGone, kEnded };

  void Loop();
  // Reads the thread's status (opening the file on the first check); outside the lock.
  Verdict Check(WatchedCall& call, Entry& e);
  void EraseLocked(uint64_t ticket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::btree_set<std::pair<absl::Time, uint64_t>> due_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // started by the first Watch
};

}  // namespace nvsentry::sentry
