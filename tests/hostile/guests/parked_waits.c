/* A guest that parks more waits than its parked_waits budget allows (tests/hostile/parked_test.cc).
 * It prints "key=value" lines and stops at handshakes: it prints "step=NAME" and reads one line
 * from standard input before going on, so the test can look at the sentry meanwhile.
 *
 *   parked_waits budget BUDGET EXTRA FLOOD
 *     BUDGET+EXTRA threads wait on a threshold nobody reaches: EXTRA are refused at once, the
 *     rest park (step=parked). Then FLOOD more refused waits from one thread (step=flooded).
 *     Then the budget comes back at each end of a parked wait: completion (an increment), a
 *     signal (EINTR), a timeout, the death of a process holding parked waits.
 *   parked_waits learn N
 *     N waits parked at once, then completed; for --learn. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/guests/nvctrl.h"

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, "\n");                                 \
      exit(1);                                               \
    }                                                        \
  } while (0)

enum { kSyncpt = 30, kMaxWaiters = 256 };

static int g_fd;

static uint32_t rd(void) {
  struct nv_id_value a = {kSyncpt, 0};
  CHECK(ioctl(g_fd, NV_SYNCPT_READ, &a) == 0, "SYNCPT_READ: %s", strerror(errno));
  return a.value;
}

static void incr(void) {
  uint32_t id = kSyncpt;
  CHECK(ioctl(g_fd, NV_SYNCPT_INCR, &id) == 0, "SYNCPT_INCR: %s", strerror(errno));
}

static void step(const char* name) {
  printf("step=%s\n", name);
  fflush(stdout);
  char line[64];
  CHECK(fgets(line, sizeof line, stdin) != NULL, "no go-ahead after %s", name);
}

/* One waiting thread: its result, and a semaphore posted when its wait returned. */
struct waiter {
  pthread_t thread;
  pid_t tid;
  uint32_t thresh;
  int32_t timeout;
  int rc, err;
  int done; /* set (atomically) once the wait returned */
};
static struct waiter g_w[kMaxWaiters];
static sem_t g_returned;

static void* wait_thread(void* p) {
  struct waiter* w = p;
  /* The thread's first call on the fd is the one the sentry identifies it by (with device files,
   * a round trip to their filesystem): made here, so that the wait, once received, parks at once
   * and the main thread's later calls cannot overtake it. */
  rd();
  __atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
  struct nv_wait_ex a = {kSyncpt, w->thresh, w->timeout, 0};
  w->rc = ioctl(g_fd, NV_SYNCPT_WAITEX, &a);
  w->err = errno;
  __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
  sem_post(&g_returned);
  return NULL;
}

static void start(int first, int n, uint32_t thresh, int32_t timeout) {
  for (int i = first; i < first + n; i++) {
    g_w[i] = (struct waiter){.thresh = thresh, .timeout = timeout};
    CHECK(pthread_create(&g_w[i].thread, NULL, wait_thread, &g_w[i]) == 0, "pthread_create");
  }
}

/* Waits for `n` waits to return (each posts once). */
static void returned(int n) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  for (int i = 0; i < n; i++)
    CHECK(sem_timedwait(&g_returned, &deadline) == 0, "only %d of %d waits returned", i, n);
}

/* How many of the threads [first, first+n) returned successfully. */
static int count_ok(int first, int n) {
  int c = 0;
  for (int i = first; i < first + n; i++) {
    pthread_join(g_w[i].thread, NULL);
    c += g_w[i].rc == 0;
  }
  return c;
}

/* The waiter's call returned (it posted g_returned): joins it. */
static int returned_now(struct waiter* w) {
  if (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) return 0;
  pthread_join(w->thread, NULL);
  return 1;
}

/* The parked ones among [first, first+n): no return yet. Joins nothing. */
static int still_waiting(int first, int n) {
  int c = 0;
  for (int i = first; i < first + n; i++) c += !__atomic_load_n(&g_w[i].done, __ATOMIC_ACQUIRE);
  return c;
}

static void on_usr1(int s) { (void)s; }

/* A wait with a short timeout: ETIMEDOUT once it could park (and timed out), ENOMEM while the
 * budget is spent. */
static int timed_wait(uint32_t thresh) {
  struct nv_wait a = {kSyncpt, thresh, 20};
  return ioctl(g_fd, NV_SYNCPT_WAIT, &a) == 0 ? 0 : errno;
}

static int mode_budget(int budget, int extra, int flood) {
  CHECK(budget + extra <= kMaxWaiters, "too many waiters");
  g_fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  CHECK(g_fd >= 0, "open: %s", strerror(errno));
  sem_init(&g_returned, 0, 0);
  const uint32_t base = rd();

  /* 1. budget+extra waits: `extra` are refused at once, whatever the order they came in. */
  start(0, budget + extra, base + 1, -1);
  returned(extra);
  int refused = 0;
  for (int i = 0; i < budget + extra; i++)
    if (returned_now(&g_w[i])) {
      refused += g_w[i].rc == -1 && g_w[i].err == ENOMEM;
      g_w[i].thread = 0;
    }
  printf("refused=%d\n", refused);
  step("parked");

  /* 2. A flood of waits the budget refuses, from one thread. */
  int flood_enomem = 0;
  for (int i = 0; i < flood; i++) flood_enomem += timed_wait(base + 1) == ENOMEM;
  printf("flood_enomem=%d\n", flood_enomem);
  step("flooded");

  /* 3. Completion gives the budget back: one increment ends every parked wait. */
  incr();
  returned(budget);
  int completed = 0;
  for (int i = 0; i < budget + extra; i++)
    if (g_w[i].thread != 0) {
      pthread_join(g_w[i].thread, NULL);
      completed += g_w[i].rc == 0;
    }
  printf("completed=%d\n", completed);

  /* 4. The whole budget parks again; one more is refused. */
  start(0, budget + 1, base + 2, -1);
  returned(1);
  int full_again = 0;
  for (int i = 0; i < budget + 1; i++)
    if (returned_now(&g_w[i])) {
      full_again += g_w[i].rc == -1 && g_w[i].err == ENOMEM;
      g_w[i].thread = 0;
    }
  printf("full_again=%d\n", full_again);

  /* 5. A signal (no SA_RESTART) ends a parked wait with EINTR and gives its charge back. */
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  for (int i = 0; i < budget + 1; i++)
    if (g_w[i].thread != 0) pthread_kill(g_w[i].thread, SIGUSR1);
  returned(budget);
  int interrupted = 0;
  for (int i = 0; i < budget + 1; i++)
    if (g_w[i].thread != 0) {
      pthread_join(g_w[i].thread, NULL);
      interrupted += g_w[i].rc == -1 && g_w[i].err == EINTR;
    }
  printf("interrupted=%d\n", interrupted);
  printf("after_signal=%d\n", timed_wait(base + 2)); /* parks, times out: ETIMEDOUT */

  /* 6. A process killed while its waits are parked gives their charges back. */
  int full[2];
  CHECK(pipe(full) == 0, "pipe");
  pid_t child = fork();
  if (child == 0) {
    sem_init(&g_returned, 0, 0);
    start(0, budget + 1, base + 3, -1);
    returned(1); /* the one refused: the others fill the budget */
    CHECK(write(full[1], "f", 1) == 1, "write");
    for (;;) pause();
  }
  char f;
  CHECK(read(full[0], &f, 1) == 1, "the child never filled the budget");
  printf("child_full=%d\n", timed_wait(base + 3) == ENOMEM);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  /* The sentry notices the death at its next look at the threads: keep asking, a while. */
  struct timespec now, pause_ms = {0, 5000000};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const time_t give_up = now.tv_sec + 20;
  int e = ENOMEM;
  while (e == ENOMEM && now.tv_sec < give_up) {
    e = timed_wait(base + 3);
    if (e == ENOMEM) nanosleep(&pause_ms, NULL);
    clock_gettime(CLOCK_MONOTONIC, &now);
  }
  printf("after_death=%d\n", e);
  return 0;
}

static int mode_learn(int n) {
  CHECK(n <= kMaxWaiters, "too many waiters");
  g_fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  CHECK(g_fd >= 0, "open: %s", strerror(errno));
  sem_init(&g_returned, 0, 0);
  const uint32_t base = rd();
  start(0, n, base + 1, -1);
  /* All n inside their ioctl (system call 16 on x86-64), or refused ... */
  for (int i = 0; i < n; i++) {
    while (!__atomic_load_n(&g_w[i].done, __ATOMIC_ACQUIRE)) {
      char path[64], buf[32] = "";
      pid_t tid = __atomic_load_n(&g_w[i].tid, __ATOMIC_ACQUIRE);
      if (tid != 0) {
        snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
        FILE* f = fopen(path, "re");
        if (f != NULL) {
          if (fgets(buf, sizeof buf, f) == NULL) buf[0] = 0;
          fclose(f);
        }
        if (strncmp(buf, "16 ", 3) == 0) break;
      }
      sched_yield();
    }
  }
  /* ... and received by the sentry: it serves calls in order, so a later one answered says so. */
  rd();
  printf("waiting=%d\n", still_waiting(0, n));
  incr();
  returned(n);
  const int ok = count_ok(0, n);
  printf("completed=%d\n", ok);
  return ok == n ? 0 : 1;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 5 && strcmp(argv[1], "budget") == 0)
    return mode_budget(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (argc == 3 && strcmp(argv[1], "learn") == 0) return mode_learn(atoi(argv[2]));
  fprintf(stderr, "usage: parked_waits budget BUDGET EXTRA FLOOD | learn N\n");
  return 2;
}
