// The threads of the test's own process, for the components that start their threads only when
// first needed. Counted as thread ids added since a snapshot: ids are not reused soon, so threads
// of an earlier test that are still ending (a joined thread is listed until the kernel releases
// it) do not count.
#pragma once

#include <dirent.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace nvsentry::testing {

// The number of this process's threads, as the kernel counts them.
inline int ThreadsOfStatus() {
  FILE* f = fopen("/proc/self/status", "re");
  if (f == nullptr) return -1;
  char line[256];
  int n = -1;
  while (fgets(line, sizeof line, f) != nullptr)
    if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
  fclose(f);
  return n;
}

// The ids of this process's threads (/proc/self/task). A listing ends early when a thread ends
// while it is read (an earlier test's), so it counts only when it agrees with the kernel's count
// before and after it.
inline std::set<pid_t> Tasks() {
  std::set<pid_t> tids;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    tids.clear();
    const int before = ThreadsOfStatus();
    DIR* d = opendir("/proc/self/task");
    if (d == nullptr) return tids;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') tids.insert(static_cast<pid_t>(atoi(e->d_name)));
    closedir(d);
    if (before == ThreadsOfStatus() && static_cast<int>(tids.size()) == before) break;
  }
  return tids;
}

// The threads that exist now and did not in `before`.
inline std::set<pid_t> TasksAdded(const std::set<pid_t>& before) {
  std::set<pid_t> added;
  for (pid_t t : Tasks())
    if (!before.contains(t)) added.insert(t);
  return added;
}

// Waits, at most `limit`, until exactly `n` threads not in `before` exist (for threads that end
// on their own time); how many there are at the end.
inline size_t TasksAddedBecome(const std::set<pid_t>& before, size_t n,
                               absl::Duration limit = absl::Seconds(10)) {
  const absl::Time end = absl::Now() + limit;
  size_t now = TasksAdded(before).size();
  while (now != n && absl::Now() < end) {
    absl::SleepFor(absl::Milliseconds(1));
    now = TasksAdded(before).size();
  }
  return now;
}

// Runs body(0), ..., body(n - 1) on n threads of its own, released together (a first use racing
// on all of them), and joins them; the threads that exist then and did not in `before`, those n
// left out.
inline std::set<pid_t> TasksAddedByRace(const std::set<pid_t>& before, int n,
                                        const std::function<void(int)>& body) {
  absl::Mutex mu;
  std::set<pid_t> racers;
  absl::Barrier* start = new absl::Barrier(n);  // the last thread through deletes it
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      {
        absl::MutexLock l(&mu);
        racers.insert(static_cast<pid_t>(syscall(SYS_gettid)));
      }
      if (start->Block()) delete start;
      body(i);
    });
  for (auto& t : threads) t.join();
  std::set<pid_t> added = TasksAdded(before);
  for (pid_t t : racers) added.erase(t);
  return added;
}

}  // namespace nvsentry::testing
