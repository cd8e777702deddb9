// The benchmark's guest: makes one kind of call in a loop, natively or under `nvsentry run`, and
// prints the ns per call of each timed block (see timing.h).
//
//   bench_guest MODE THREADS CALLS BLOCKS [PATH]
//     MODE     getppid   a syscall nothing traps
//              ioctl     FIONREAD on a pipe: an ioctl whose code nvsentry's filter lets through
//              syncpt    NVHOST_IOCTL_CTRL_SYNCPT_READ of syncpoint 1 on /dev/nvhost-ctrl
//              open      open+close of PATH (default /etc/passwd), read-only
//     THREADS  threads making calls at once; a block's figure is its wall time divided by all
//              threads' calls together, so 1e9 / figure is the throughput
//     CALLS    calls per block, all threads together
//     BLOCKS   timed blocks, after an untimed warm-up of a quarter block per thread
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/timing.h"

namespace {

constexpr unsigned long kSyncptRead = 0xC0080014;

struct SyncptIdValue {
  uint32_t id;
  uint32_t value;
};

struct Target {
  std::string mode;
  std::string path = "/etc/passwd";
  int fd = -1;
};

bool CallGetppid(const Target&) { return syscall(SYS_getppid) >= 0; }

bool CallIoctl(const Target& t) {
  int queued = 0;
  return ioctl(t.fd, FIONREAD, &queued) == 0;
}

bool CallSyncptRead(const Target& t) {
  SyncptIdValue arg{1, 0};
  return ioctl(t.fd, kSyncptRead, &arg) == 0;
}

bool CallOpenClose(const Target& t) {
  int fd = open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
  return fd >= 0 && close(fd) == 0;
}

using CallFn = bool (*)(const Target&);

// Opens what the mode's calls need once, outside any timing; returns the call or null.
CallFn Prepare(Target* t) {
  if (t->mode == "getppid") return CallGetppid;
  if (t->mode == "open") return CallOpenClose;
  if (t->mode == "ioctl") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return nullptr;
    t->fd = p[0];
    return CallIoctl;
  }
  if (t->mode == "syncpt") {
    t->fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
    return t->fd >= 0 ? CallSyncptRead : nullptr;
  }
  return nullptr;
}

struct Run {
  const Target* target;
  CallFn call;
  long per_thread;
  int blocks;
  pthread_barrier_t start, stop;  // every worker and the timing thread meet at both
};

[[noreturn]] void Die(const char* what) {
  fprintf(stderr, "bench_guest: %s: %s\n", what, strerror(errno));
  exit(1);
}

void MakeCalls(const Run& run, long n) {
  for (long i = 0; i < n; ++i)
    if (!run.call(*run.target)) Die(run.target->mode.c_str());
}

void* Worker(void* p) {
  Run& run = *static_cast<Run*>(p);
  MakeCalls(run, std::max(run.per_thread / 4, 1L));
  for (int b = 0; b < run.blocks; ++b) {
    pthread_barrier_wait(&run.start);
    MakeCalls(run, run.per_thread);
    pthread_barrier_wait(&run.stop);
  }
  return nullptr;
}

// The calling thread only keeps time, so one code path serves one thread and many: a block
// starts when every worker is warm and ends when the last worker is done.
std::vector<double> TimeThreads(Run& run, int threads) {
  pthread_barrier_init(&run.start, nullptr, static_cast<unsigned>(threads) + 1);
  pthread_barrier_init(&run.stop, nullptr, static_cast<unsigned>(threads) + 1);
  std::vector<pthread_t> ids(static_cast<size_t>(threads));
  for (pthread_t& id : ids)
    if (pthread_create(&id, nullptr, Worker, &run) != 0) Die("pthread_create");
  std::vector<double> ns;
  for (int b = 0; b < run.blocks; ++b) {
    pthread_barrier_wait(&run.start);
    int64_t t0 = nvbench::NowNs();
    pthread_barrier_wait(&run.stop);
    ns.push_back(static_cast<double>(nvbench::NowNs() - t0) /
                 static_cast<double>(run.per_thread * threads));
  }
  for (pthread_t id : ids) pthread_join(id, nullptr);
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr char kUsage[] =
      "usage: bench_guest getppid|ioctl|syncpt|open THREADS CALLS BLOCKS [PATH]\n";
  if (argc < 5 || argc > 6) {
    fprintf(stderr, "bench_guest: %s\n%s", argc < 5 ? "missing arguments" : "too many arguments",
            kUsage);
    return 2;
  }
  Target target{argv[1]};
  if (argc > 5) target.path = argv[5];
  const int threads = atoi(argv[2]);
  const long calls = atol(argv[3]);
  const int blocks = atoi(argv[4]);
  if (threads < 1 || calls < threads || blocks < 1) {
    fprintf(stderr, "bench_guest: THREADS, CALLS and BLOCKS must be positive, CALLS >= THREADS\n%s",
            kUsage);
    return 2;
  }
  errno = 0;
  CallFn call = Prepare(&target);
  if (call == nullptr && errno == 0) {
    fprintf(stderr, "bench_guest: unknown mode '%s'\n%s", target.mode.c_str(), kUsage);
    return 2;
  }
  if (call == nullptr) Die(target.mode.c_str());
  Run run{&target, call, calls / threads, blocks, {}, {}};
  fputs(nvbench::FormatSamples(TimeThreads(run, threads)).c_str(), stdout);
  return fflush(stdout) == 0 ? 0 : 1;
}
