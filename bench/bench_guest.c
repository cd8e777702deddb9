/* The benchmark's guest: times a loop of one kind of call and prints "ns_per_call=X" (per
 * thread, averaged) and "calls_per_sec=Y" (all threads together). */
#define _GNU_SOURCE
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

static long g_n;
static int g_fd;
static const char* g_path;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void* syncpt_loop(void* p) {
  (void)p;
  struct { uint32_t id, value; } a = {1, 0};
  for (long i = 0; i < g_n; i++)
    if (ioctl(g_fd, SYNCPT_READ, &a) != 0) { perror("SYNCPT_READ"); exit(1); }
  return NULL;
}

static void* open_loop(void* p) {
  (void)p;
  for (long i = 0; i < g_n; i++) {
    int fd = open(g_path, O_RDONLY);
    if (fd < 0) { perror("open"); exit(1); }
    close(fd);
  }
  return NULL;
}

/* An ioctl the sandbox never traps (FIONREAD, magic 'T'): the machine's syscall floor. */
static void* native_loop(void* p) {
  (void)p;
  int avail;
  for (long i = 0; i < g_n; i++) ioctl(g_fd, 0x541B /* FIONREAD */, &avail);
  return NULL;
}

/* The trapped code on a plain fd: what the raw supervisor answers. */
static void* trapped_loop(void* p) {
  (void)p;
  struct { uint32_t id, value; } a = {1, 0};
  for (long i = 0; i < g_n; i++) ioctl(g_fd, SYNCPT_READ, &a);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_guest syncpt|open|native|trapped CALLS THREADS\n");
    return 2;
  }
  const char* mode = argv[1];
  g_n = atol(argv[2]);
  int threads = atoi(argv[3]);
  void* (*loop)(void*) = NULL;
  int p[2];
  if (!strcmp(mode, "syncpt")) {
    g_fd = open("/dev/nvhost-ctrl", O_RDWR);
    loop = syncpt_loop;
  } else if (!strcmp(mode, "open")) {
    g_path = "/etc/passwd";
    loop = open_loop;
  } else if (!strcmp(mode, "native") || !strcmp(mode, "trapped")) {
    if (pipe(p) != 0) return 1;
    g_fd = p[0];
    loop = mode[0] == 'n' ? native_loop : trapped_loop;
  }
  if (loop == NULL || g_fd < 0) { fprintf(stderr, "bad mode or device\n"); return 2; }
  long n = g_n;
  g_n = n / 10; /* warm up */
  loop(NULL);
  g_n = n;
  pthread_t t[64];
  double t0 = now_s();
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  double dt = now_s() - t0;
  printf("ns_per_call=%.1f calls_per_sec=%.0f\n", dt * 1e9 / n, n * threads / dt);
  return 0;
}
