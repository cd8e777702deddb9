/* The parked-waits benchmark's guest (bench/parked_bench.cc drives it; docs/benchmarks.md).
 *
 *   parked_guest WAITS CALLS BLOCKS
 *
 * Under nvsentry it times SYNCPT_READ with nothing parked, then parks WAITS threads in
 * SYNCPT_WAITEX (a threshold never reached, no timeout), waits until the sentry holds every one
 * of them, and times SYNCPT_READ again. Between the steps it stops at a handshake with the driver
 * (a line on standard output, then one read from standard input), so that the driver can measure
 * the sentry's CPU while the guest does nothing. Lines it prints:
 *   unloaded_ns A B C ...   ns per SYNCPT_READ of each timed block, nothing parked
 *   idle                    (then waits for a line) nothing parked, the guest idle
 *   parked N                (then waits for a line) N waits parked, the guest idle
 *   loaded_ns A B C ...     ns per SYNCPT_READ with the N waits parked
 * Exiting ends the parked threads with the process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define SYNCPT_READ 0xC0080014u
#define SYNCPT_WAITEX 0xC0100019u
#define WAIT_SYNCPT 20u /* nothing increments it in this guest */

struct id_value {
  uint32_t id, value;
};
struct wait_ex {
  uint32_t id, thresh;
  int32_t timeout;
  uint32_t value;
};

static int g_fd;
static uint32_t g_thresh;
static pid_t* g_tids;

static void die(const char* what) {
  fprintf(stderr, "parked_guest: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint32_t read_syncpt(uint32_t id) {
  struct id_value a = {id, 0};
  if (ioctl(g_fd, SYNCPT_READ, &a) != 0) die("SYNCPT_READ");
  return a.value;
}

static void time_reads(const char* tag, long calls, int blocks) {
  for (long i = 0; i < calls / 4; ++i) read_syncpt(1);
  printf("%s", tag);
  for (int b = 0; b < blocks; ++b) {
    int64_t t0 = now_ns();
    for (long i = 0; i < calls; ++i) read_syncpt(1);
    printf(" %.1f", (double)(now_ns() - t0) / (double)calls);
  }
  printf("\n");
  fflush(stdout);
}

/* The driver's go-ahead: one line on standard input. */
static void handshake(const char* line) {
  printf("%s\n", line);
  fflush(stdout);
  char buf[64];
  if (fgets(buf, sizeof buf, stdin) == NULL) die("waiting for the driver");
}

static void* waiter(void* p) {
  g_tids[(intptr_t)p] = gettid();
  struct wait_ex w = {WAIT_SYNCPT, g_thresh, -1, 0};
  ioctl(g_fd, SYNCPT_WAITEX, &w);
  /* Only an exit ends the wait; an answer means the sentry refused to park it. */
  fprintf(stderr, "parked_guest: a wait returned: %s\n", strerror(errno));
  exit(1);
  return NULL;
}

/* The thread is inside its ioctl (system call 16 on x86-64, 54 on 32-bit x86). */
static int in_ioctl(pid_t tid) {
  char path[64], buf[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  return strncmp(buf, sizeof(void*) == 8 ? "16 " : "54 ", 3) == 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: parked_guest WAITS CALLS BLOCKS\n");
    return 2;
  }
  const int waits = atoi(argv[1]);
  const long calls = atol(argv[2]);
  const int blocks = atoi(argv[3]);
  if (waits < 1 || calls < 1 || blocks < 1) {
    fprintf(stderr,
            "parked_guest: WAITS, CALLS and BLOCKS must be numbers above 0\n"
            "usage: parked_guest WAITS CALLS BLOCKS\n");
    return 2;
  }
  g_fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  if (g_fd < 0) die("open /dev/nvhost-ctrl");
  g_tids = calloc((size_t)waits, sizeof *g_tids);
  g_thresh = read_syncpt(WAIT_SYNCPT) + 0x40000000u;

  time_reads("unloaded_ns", calls, blocks);
  handshake("idle");

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (intptr_t i = 0; i < waits; ++i) {
    pthread_t t;
    errno = pthread_create(&t, &attr, waiter, (void*)i);
    if (errno != 0) die("pthread_create");
  }
  /* Every waiter is inside its call; the kernel queues calls for the sentry in order, so once
   * a later call is answered, the sentry has received every wait. */
  for (int next = 0, tries = 0; next < waits; ++tries) {
    if (tries > 6000) die("the waits did not all reach their ioctl within a minute");
    while (next < waits && g_tids[next] != 0 && in_ioctl(g_tids[next])) ++next;
    if (next < waits) usleep(10000);
  }
  read_syncpt(1);
  char line[32];
  snprintf(line, sizeof line, "parked %d", waits);
  handshake(line);

  time_reads("loaded_ns", calls, blocks);
  _exit(0);
}
