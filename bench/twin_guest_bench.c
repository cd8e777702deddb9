/* The host backend's twins (docs/host-passthrough.md, "Memory"), as a guest sees them; run under
 * `nvsentry run`, over either backend (bench/run.sh runs both against `nvsentry fake-l4t`):
 *
 *   twin_guest_bench latency ROUNDS MIB [KIB]
 *       one nvmap object of MIB MiB of fresh guest memory mapped into the GPU, a small one for the
 *       pushbuffer; each round writes 1% of the big object's bytes (or KIB KiB: the same bytes,
 *       new values), then submits one GPFIFO entry with a fence and waits for it. Prints the
 *       median submit-to-fence.
 *   twin_guest_bench copy ROUNDS MIB [KIB]
 *       the same, but each round's submission is a DMA copy of the bytes just written into a
 *       second object: the GPU reads what the guest wrote and writes what the guest then may read
 *       (over the host backend, the twins move those bytes both ways).
 *   twin_guest_bench hold OBJECTS MIB SECONDS
 *       OBJECTS objects of MIB MiB each over untouched guest memory, all mapped, one submission
 *       waited for; prints "holding" and the guest's own resident memory, then sleeps SECONDS so
 *       that the caller can read the sentry's and the host's memory meanwhile. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nvclient.h"

static struct nvc nv;
static uint32_t nvmap, ctrl, as, ch;

static void must(const char* what, int rc) {
  if (rc != 0) {
    fprintf(stderr, "twin_guest_bench: %s failed: %s\n", what, nvc_strerror(&nv, rc));
    exit(1);
  }
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

struct buf {
  uint8_t* cpu;
  uint64_t gpu;
  uint32_t handle;
};

/* Fresh memory, not populated: the guest touches what it writes and nothing else. */
static void make_buf(struct buf* b, uint64_t size) {
  b->cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b->cpu == MAP_FAILED) exit(1);
  must("map memory",
       nvc_map_memory(&nv, nvmap, as, b->cpu, (uint32_t)size, 0x20000, &b->handle, &b->gpu));
}

static void submit_and_wait(uint64_t va, uint32_t words) {
  struct {
    struct nvgpu_submit_gpfifo h;
    struct nvgpu_gpfifo_entry e[1];
  } s;
  memset(&s, 0, sizeof s);
  s.h.num_entries = 1;
  s.h.flags = NVGPU_SUBMIT_FENCE_GET;
  s.e[0] = nvc_gpfifo_entry(va, words);
  must("SUBMIT_GPFIFO", nvc_ioctl(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | (sizeof s << 16), &s));
  struct nvhost_wait_ex w = {s.h.fence.id, s.h.fence.value, 10000, 0};
  must("SYNCPT_WAITEX", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
}

static long resident_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  if (f != NULL) fclose(f);
  return kib;
}

static long arg(const char* s, long lo, long hi) {
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "twin_guest_bench: %s is not from %ld to %ld\n", s, lo, hi);
    exit(2);
  }
  return v;
}

int main(int argc, char** argv) {
  const int copy = (argc == 4 || argc == 5) && strcmp(argv[1], "copy") == 0;
  const int latency = copy || ((argc == 4 || argc == 5) && strcmp(argv[1], "latency") == 0);
  const int hold = argc == 5 && strcmp(argv[1], "hold") == 0;
  if (!latency && !hold) {
    fprintf(stderr,
            "usage: twin_guest_bench latency ROUNDS MIB [KIB]\n"
            "       twin_guest_bench copy ROUNDS MIB [KIB]\n"
            "       twin_guest_bench hold OBJECTS MIB SECONDS\n");
    return 2;
  }
  must("init", nvc_init(&nv, NVC_VIA_DIRECT, 0));
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));
  must("open ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &ctrl));
  must("open as", nvc_open(&nv, "/dev/nvhost-as-gpu", &as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .big_page_size = 0x20000};
  must("ALLOC_AS_EX", nvc_ioctl(&nv, as, NVGPU_AS_ALLOC_AS_EX, &a));
  const char* step = "";
  int rc = nvc_make_channel(&nv, nvmap, as, 0x800, &ch, &step);
  must(step, rc);
  struct buf push;
  make_buf(&push, 0x10000);
  struct nvc_push nop = {0};
  nvc_push_incr(&nop, 4, 0x000, 1, 0xB0B5u);
  memcpy(push.cpu, nop.words, nop.count * 4);

  if (hold) {
    const long objects = arg(argv[2], 1, 64), mib = arg(argv[3], 1, 1024);
    const long seconds = arg(argv[4], 0, 3600);
    struct buf b;
    for (long i = 0; i < objects; i++) make_buf(&b, (uint64_t)mib << 20);
    submit_and_wait(push.gpu, nop.count);
    printf("holding %ld objects of %ld MiB; guest VmRSS %ld kB\n", objects, mib, resident_kib());
    fflush(stdout);
    sleep((unsigned)seconds);
    return 0;
  }
  const int rounds = (int)arg(argv[2], 3, 100000);
  const long mib = arg(argv[3], 1, 1024);
  const uint64_t big = (uint64_t)mib << 20;
  const uint64_t written = argc == 5 ? (uint64_t)arg(argv[4], 1, mib << 10) << 10 : big / 100;
  struct buf b;
  make_buf(&b, big);
  if (copy) { /* the pushbuffer becomes one DMA copy of the written bytes into `dst` */
    struct buf dst;
    make_buf(&dst, (written + 0xFFFF) & ~(uint64_t)0xFFFF);
    struct nvc_push p = {0};
    nvc_push_incr(&p, 4, 0x000, 1, 0xB0B5u);
    nvc_push_incr(&p, 4, 0x400, 8, (uint32_t)(b.gpu >> 32), (uint32_t)b.gpu,
                  (uint32_t)(dst.gpu >> 32), (uint32_t)dst.gpu, (uint32_t)written,
                  (uint32_t)written, (uint32_t)written, 1u);
    nvc_push_incr(&p, 4, 0x300, 1, 2u | (1u << 2) | (1u << 7) | (1u << 8));
    memcpy(push.cpu, p.words, p.count * 4);
    nop = p;
  }
  double* t = calloc((size_t)rounds, sizeof(double));
  for (int r = -2; r < rounds; r++) { /* two warm-ups: the twin's first push among them */
    memset(b.cpu, r & 0xFF, written);
    double t0 = now_ns();
    submit_and_wait(push.gpu, nop.count);
    if (r >= 0) t[r] = now_ns() - t0;
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp);
  char what[32] = "1%";
  if (argc == 5) snprintf(what, sizeof what, "%llu KiB", (unsigned long long)(written >> 10));
  printf("submit-to-fence%s, %ld MiB mapped, %s written: median %.1f us, worst %.1f us\n",
         copy ? " (a DMA copy of what was written)" : "", mib, what, t[rounds / 2] / 1e3,
         t[rounds - 1] / 1e3);
  return 0;
}
