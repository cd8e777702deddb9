/* Guest for the simulated-GPU integration tests, built on the examples' nvdrv client. Each mode
 * prints "key=value" results (the tests judge them) and ends with "done=1".
 *   nvmap            CREATE/ALLOC/GET_ID/PARAM/FREE and their errors on this process's memory
 *   share            parent makes an object, a forked child FROM_IDs it, writes through the GPU
 *                    (a DMA copy on its own channel) and the parent sees the bytes
 *   fault-unmapped   a GPFIFO entry whose pushbuffer address nothing maps
 *   fault-munmap     a DMA copy from an object whose guest pages were munmapped
 *   bad-subchannel   a method for a subchannel no class is bound to
 *   chan-wait        the channel's WAIT on a semaphore a pushbuffer releases, and its errors
 *   multi            two address spaces and three channels in one guest, all working at once
 *   budget-loop N    N rounds of CREATE until refused, then FREE of everything; sleeps 300 ms
 *                    after rounds 1 and N so the test can read the sentry's memory
 *   as               address-space answers: fixed and sparse reservations, overlaps, unmaps
 *   gpu-writes       writes of the GPU the guest reads after their fence: a DMA copy with a
 *                    negative pitch, inline-to-memory data sent a submission after its launch,
 *                    NOTIFY, and a DMA semaphore at an unaligned address (a sum of each result)
 *   budgets          a second channel, a second address space, a pinned ALLOC past pinned_bytes
 *                    and a sentry-memory ALLOC past transfer_memory (the policy sets 1, 1,
 *                    64 KiB and 8 MiB + 64 KiB), then DumpStatus with one 16 KiB pin
 * The client goes through /dev/nvdrv unless NVC_DIRECT=1 is set. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvclient.h"

static struct nvc nv;

static int must(const char* what, int rc) {
  if (rc != 0) {
    printf("failed=%s error=%d\n", what, rc);
    fflush(stdout);
    exit(3);
  }
  return rc;
}

struct gpu {
  uint32_t nvmap, ctrl, as, ch;
};

struct buf {
  uint8_t* cpu;
  uint32_t size, handle;
  uint64_t gpu;
};

static void open_all(struct gpu* g) {
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &g->nvmap));
  must("open ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &g->ctrl));
}

static void make_as(struct gpu* g) {
  must("open as", nvc_open(&nv, "/dev/nvhost-as-gpu", &g->as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .big_page_size = 0x20000};
  must("ALLOC_AS_EX", nvc_ioctl(&nv, g->as, NVGPU_AS_ALLOC_AS_EX, &a));
}

static void make_buf(struct gpu* g, struct buf* b, uint32_t size) {
  b->size = size;
  b->cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  must("map memory",
       nvc_map_memory(&nv, g->nvmap, g->as, b->cpu, size, 0x1000, &b->handle, &b->gpu));
}

/* A channel bound to g->as with a 3D context; returns its fd. */
static uint32_t make_channel(struct gpu* g, struct buf* notifier) {
  uint32_t ch;
  const char* step = "";
  int rc = nvc_make_channel(&nv, g->nvmap, g->as, 0x100, &ch, &step);
  must(step, rc);
  if (notifier != NULL) {
    struct nvgpu_set_error_notifier en = {0, 4096, notifier->handle, 0};
    must("SET_ERROR_NOTIFIER", nvc_ioctl(&nv, ch, NVGPU_CH_SET_ERROR_NOTIFIER, &en));
  }
  return ch;
}

/* Submits `n` words placed at push->cpu + at*4 as one entry with a fence; returns the rc. */
static int submit(uint32_t ch, struct buf* push, uint32_t at, const uint32_t* words, uint32_t n,
                  struct nvgpu_fence* fence) {
  memcpy(push->cpu + at * 4, words, n * 4);
  struct {
    struct nvgpu_submit_gpfifo h;
    struct nvgpu_gpfifo_entry e[1];
  } s;
  memset(&s, 0, sizeof s);
  s.h.num_entries = 1;
  s.h.flags = NVGPU_SUBMIT_FENCE_GET;
  s.e[0] = nvc_gpfifo_entry(push->gpu + at * 4, n);
  int rc = nvc_ioctl(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)sizeof s << 16), &s);
  if (fence != NULL) *fence = s.h.fence;
  return rc;
}

static int wait_fence(struct gpu* g, struct nvgpu_fence f, int timeout_ms) {
  struct nvhost_wait_ex w = {f.id, f.value, timeout_ms, 0};
  return nvc_ioctl(&nv, g->ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w);
}

/* A DMA copy of `size` bytes as one line. */
static uint32_t dma_copy_words(struct nvc_push* p, uint64_t src, uint64_t dst, uint32_t size) {
  nvc_push_incr(p, 4, 0x000, 1, 0xB0B5u);
  nvc_push_incr(p, 4, 0x400, 8, (uint32_t)(src >> 32), (uint32_t)src, (uint32_t)(dst >> 32),
                (uint32_t)dst, size, size, size, 1u);
  nvc_push_incr(p, 4, 0x300, 1, 2u | (1u << 2) | (1u << 7) | (1u << 8));
  return p->count;
}

/* Polls GET_ERROR_NOTIFICATION until status is nonzero (or 2 s pass). */
static struct nvgpu_error_notification wait_error(uint32_t ch) {
  struct nvgpu_error_notification n;
  for (int i = 0; i < 200; i++) {
    memset(&n, 0, sizeof n);
    must("GET_ERROR_NOTIFICATION", nvc_ioctl(&nv, ch, NVGPU_CH_GET_ERROR_NOTIFICATION, &n));
    if (n.status != 0 || n.info32 != 0) break;
    usleep(10000);
  }
  return n;
}

static int mode_nvmap(void) {
  struct gpu g;
  open_all(&g);
  struct nvmap_create cr = {0, 0};
  printf("create_zero=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_CREATE, &cr));
  cr.size = 5000;
  printf("create=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_CREATE, &cr));
  uint32_t h = cr.handle;
  printf("handle_nonzero=%d\n", h != 0);
  struct nvmap_param p = {h, 1, 0};
  must("PARAM size", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_PARAM, &p));
  printf("param_size=%u\n", p.result);
  uint8_t* mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct nvmap_alloc bad_align = {h, 0, 1, 0x3000, 0, {0}, (uint64_t)(uintptr_t)mem};
  printf("alloc_bad_align=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_ALLOC, &bad_align));
  struct nvmap_alloc unknown = {0xFFF0, 0, 1, 0x1000, 0, {0}, (uint64_t)(uintptr_t)mem};
  printf("alloc_unknown=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_ALLOC, &unknown));
  struct nvmap_alloc al = {h, 0, 1, 0x100, 0, {0}, (uint64_t)(uintptr_t)mem};
  int rc = nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_ALLOC, &al); /* before printf reads the outputs */
  printf("alloc=%d align_out=0x%X\n", rc, al.align);
  p.param = 4;
  must("PARAM heap", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_PARAM, &p));
  printf("param_heap=0x%X\n", p.result);
  struct nvmap_get_id id = {0, h};
  rc = nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_GET_ID, &id);
  printf("get_id=%d id_matches_handle=%d\n", rc, id.id == h);
  struct nvmap_free fr = {0xFFF0, 0, 0, 0, 0};
  printf("free_unknown=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_FREE, &fr));
  fr.handle = h;
  rc = nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_FREE, &fr);
  printf("free=%d free_address_is_mem=%d free_size=%u\n", rc,
         fr.address == (uint64_t)(uintptr_t)mem, fr.size);
  printf("free_again=%d\n", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_FREE, &fr));
  return 0;
}

static int mode_share(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf shared;
  make_buf(&g, &shared, 4096);
  memset(shared.cpu, 0, 4096);
  struct nvmap_get_id id = {0, shared.handle};
  must("GET_ID", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_GET_ID, &id));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    /* A new process: a client of its own; the parent's handle means nothing here until FROM_ID. */
    struct gpu c = g;
    make_as(&c);
    struct nvgpu_as_map_ex m = {4, 0, shared.handle, 0, 0, 0, 0x1000};
    printf("child_map_before_from_id=%d\n", nvc_ioctl(&nv, c.as, NVGPU_AS_MAP_BUFFER_EX, &m));
    struct nvmap_from_id f = {id.id, 0};
    int rc = nvc_ioctl(&nv, c.nvmap, NVMAP_IOC_FROM_ID, &f);
    printf("child_from_id=%d\n", rc);
    if (rc != 0) {
      fflush(stdout);
      _exit(0);
    }
    m.mem_id = f.handle;
    must("child MAP", nvc_ioctl(&nv, c.as, NVGPU_AS_MAP_BUFFER_EX, &m));
    struct buf src, push;
    make_buf(&c, &src, 4096);
    make_buf(&c, &push, 4096);
    memset(src.cpu, 0x5A, 4096);
    uint32_t ch = make_channel(&c, NULL);
    struct nvc_push p = {0};
    dma_copy_words(&p, src.gpu, m.offset, 4096);
    struct nvgpu_fence fence;
    must("child submit", submit(ch, &push, 0, p.words, p.count, &fence));
    printf("child_wait=%d\n", wait_fence(&c, fence, 5000));
    fflush(stdout);
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  int all = 1;
  for (int i = 0; i < 4096; i++) all &= shared.cpu[i] == 0x5A;
  printf("parent_sees_child_write=%d\n", all);
  return 0;
}

static int mode_fault(int kind) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf notifier, push, src, dst;
  make_buf(&g, &notifier, 4096);
  make_buf(&g, &push, 4096);
  make_buf(&g, &src, 8192);
  make_buf(&g, &dst, 8192);
  memset(notifier.cpu, 0, 4096);
  uint32_t ch = make_channel(&g, &notifier);
  uint32_t other = make_channel(&g, NULL);
  int efd = -1;
  if (nv.via == NVC_VIA_NVDRV) must("QueryEvent error", nvc_query_event(&nv, ch, 3, &efd));
  struct nvc_push p = {0};
  int rc;
  if (kind == 0) {
    /* The pushbuffer lives at an address nothing maps. */
    uint32_t w = 0x20010008u; /* a NOP, never fetched */
    memcpy(push.cpu, &w, 4);
    struct {
      struct nvgpu_submit_gpfifo h;
      struct nvgpu_gpfifo_entry e[1];
    } s;
    memset(&s, 0, sizeof s);
    s.h.num_entries = 1;
    s.e[0] = nvc_gpfifo_entry(0x7700000000ull, 1);
    rc = nvc_ioctl(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)sizeof s << 16), &s);
  } else if (kind == 1) {
    munmap(src.cpu, 8192); /* the guest takes its pinned pages away */
    dma_copy_words(&p, src.gpu, dst.gpu, 8192);
    rc = submit(ch, &push, 0, p.words, p.count, NULL);
  } else {
    /* A 3D-class method on subchannel 5, to which nothing is bound. */
    nvc_push_incr(&p, 5, 0x1B00, 1, 0u);
    rc = submit(ch, &push, 0, p.words, p.count, NULL);
  }
  printf("submit=%d\n", rc);
  struct nvgpu_error_notification n = wait_error(ch);
  printf("notification_status=%u info32=%u\n", n.status, n.info32);
  struct nvgpu_error_notification in_mem;
  memcpy(&in_mem, notifier.cpu, sizeof in_mem);
  printf("notifier_memory_status=%u notifier_memory_info32=%u\n", in_mem.status, in_mem.info32);
  if (efd >= 0) {
    struct pollfd pf = {efd, POLLIN, 0};
    printf("error_event=%d\n", poll(&pf, 1, 2000));
  }
  /* The faulted channel refuses work until reset; the other one is unaffected. */
  struct nvc_push q = {0};
  nvc_push_incr(&q, 0, 0x000, 1, 0xB197u);
  struct nvgpu_fence f;
  printf("submit_after_fault=%d\n", submit(ch, &push, 64, q.words, q.count, &f));
  printf("other_submit=%d\n", submit(other, &push, 128, q.words, q.count, &f));
  printf("other_wait=%d\n", wait_fence(&g, f, 5000));
  printf("reset=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_FORCE_RESET, NULL));
  int rc2 = submit(ch, &push, 192, q.words, q.count, &f);
  printf("submit_after_reset=%d\n", rc2);
  if (rc2 == 0) printf("wait_after_reset=%d\n", wait_fence(&g, f, 5000));
  return 0;
}

/* The channel's own WAIT on a semaphore the GPU releases: only a check with timeout 0, a bad
 * type, the release met (and seen in this process's memory), a value never written timing out. */
#define NVGPU_CH_WAIT 0x40184806u
struct nvgpu_channel_wait {
  uint32_t type; /* 0 notifier, 1 semaphore */
  uint32_t timeout;
  uint32_t handle;
  uint32_t offset;
  uint32_t payload;
  uint32_t padding;
};

static int mode_chan_wait(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf push, sema;
  make_buf(&g, &push, 4096);
  make_buf(&g, &sema, 4096);
  uint32_t ch = make_channel(&g, NULL);
  const uint32_t sequence = 0x5EED0002u;
  struct nvgpu_channel_wait w = {1, 0, sema.handle, 0, sequence, 0};
  printf("wait_unmet_zero=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_WAIT, &w));
  struct nvgpu_channel_wait bad = {2, 0, sema.handle, 0, sequence, 0};
  printf("wait_bad_type=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_WAIT, &bad));
  struct nvgpu_channel_wait misaligned = {1, 10, sema.handle, 2, sequence, 0};
  printf("wait_misaligned=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_WAIT, &misaligned));
  /* The 3D class's report semaphore: release `sequence` as one word. */
  struct nvc_push p = {0};
  nvc_push_incr(&p, 0, 0x000, 1, 0xB197u);
  nvc_push_incr(&p, 0, 0x1B00, 4, (uint32_t)(sema.gpu >> 32), (uint32_t)sema.gpu, sequence,
                0u | (1u << 4) | (0xFu << 12) | (1u << 28));
  struct nvgpu_fence f;
  printf("submit=%d\n", submit(ch, &push, 0, p.words, p.count, &f));
  w.timeout = 5000;
  printf("wait_met=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_WAIT, &w));
  uint32_t seen;
  memcpy(&seen, sema.cpu, 4);
  printf("sees_release=%d\n", seen == sequence);
  struct nvgpu_channel_wait never = {1, 50, sema.handle, 0, 0x12345678u, 0};
  printf("wait_never=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_WAIT, &never));
  return 0;
}

static int mode_multi(void) {
  struct gpu a, b;
  open_all(&a);
  b = a;
  make_as(&a);
  make_as(&b);
  struct buf asrc, adst, apush, bsrc, bdst, bpush;
  make_buf(&a, &asrc, 65536);
  make_buf(&a, &adst, 65536);
  make_buf(&a, &apush, 4096);
  make_buf(&b, &bsrc, 65536);
  make_buf(&b, &bdst, 65536);
  make_buf(&b, &bpush, 4096);
  memset(asrc.cpu, 0xA1, 65536);
  memset(bsrc.cpu, 0xB2, 65536);
  uint32_t ch1 = make_channel(&a, NULL), ch2 = make_channel(&a, NULL), ch3 = make_channel(&b, NULL);
  struct nvc_push p1 = {0}, p2 = {0}, p3 = {0};
  dma_copy_words(&p1, asrc.gpu, adst.gpu, 32768);
  dma_copy_words(&p2, asrc.gpu + 32768, adst.gpu + 32768, 32768);
  dma_copy_words(&p3, bsrc.gpu, bdst.gpu, 65536);
  struct nvgpu_fence f1, f2, f3;
  must("submit1", submit(ch1, &apush, 0, p1.words, p1.count, &f1));
  must("submit2", submit(ch2, &apush, 256, p2.words, p2.count, &f2));
  must("submit3", submit(ch3, &bpush, 0, p3.words, p3.count, &f3));
  printf("distinct_syncpoints=%d\n", f1.id != f2.id && f2.id != f3.id && f1.id != f3.id);
  printf("wait1=%d wait2=%d wait3=%d\n", wait_fence(&a, f1, 5000), wait_fence(&a, f2, 5000),
         wait_fence(&b, f3, 5000));
  int oka = 1, okb = 1;
  for (int i = 0; i < 65536; i++) oka &= adst.cpu[i] == 0xA1, okb &= bdst.cpu[i] == 0xB2;
  printf("as_a_copied=%d as_b_copied=%d\n", oka, okb);
  return 0;
}

static uint32_t sum_bytes(const uint8_t* p, uint32_t n) {
  uint32_t s = 0;
  for (uint32_t i = 0; i < n; i++) s = s * 31 + p[i];
  return s;
}

/* Submits `p` on `ch` from `at` words into `push`, waits for its fence; prints `key`=the wait. */
static void run_and_wait(struct gpu* g, uint32_t ch, struct buf* push, uint32_t at,
                         struct nvc_push* p, const char* key) {
  struct nvgpu_fence f;
  must(key, submit(ch, push, at, p->words, p->count, &f));
  printf("%s=%d\n", key, wait_fence(g, f, 5000));
  p->count = 0;
}

static int mode_gpu_writes(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf src, dst, push;
  make_buf(&g, &src, 65536);
  make_buf(&g, &dst, 65536);
  make_buf(&g, &push, 32768);
  for (uint32_t i = 0; i < 65536; i++) src.cpu[i] = (uint8_t)(i * 7 + 3);
  const uint32_t ch = make_channel(&g, NULL);
  struct nvc_push p = {0};
  /* A DMA copy of 4 lines of 64 bytes, read 256 apart upward, written 256 apart downward from
   * the middle of dst. */
  const uint64_t down = dst.gpu + 32768;
  nvc_push_incr(&p, 4, 0x000, 1, 0xB0B5u);
  nvc_push_incr(&p, 4, 0x400, 8, (uint32_t)(src.gpu >> 32), (uint32_t)src.gpu,
                (uint32_t)(down >> 32), (uint32_t)down, 256u, (uint32_t)-256, 64u, 4u);
  nvc_push_incr(&p, 4, 0x300, 1, 2u | (1u << 7) | (1u << 8) | (1u << 9));
  run_and_wait(&g, ch, &push, 0, &p, "wait_negative_pitch");
  printf("negative_pitch_sum=%u\n", sum_bytes(dst.cpu + 32768 - 3 * 256, 4 * 256));
  /* Inline-to-memory: the launch (64 bytes, one line, at dst + 4096) in one submission, its 16
   * data words in the next. */
  const uint64_t inl = dst.gpu + 4096;
  nvc_push_incr(&p, 5, 0x000, 1, 0xA140u);
  nvc_push_incr(&p, 5, 0x180, 5, 64u, 1u, (uint32_t)(inl >> 32), (uint32_t)inl, 64u);
  nvc_push_incr(&p, 5, 0x1B0, 1, 1u);
  run_and_wait(&g, ch, &push, 1024, &p, "wait_i2m_launch");
  uint32_t data[16];
  for (uint32_t i = 0; i < 16; i++) data[i] = 0x01020304u * (i + 1);
  nvc_push_method(&p, 3, 5, 0x1B4, data, 16);
  run_and_wait(&g, ch, &push, 2048, &p, "wait_i2m_data");
  printf("inline_data_sum=%u\n", sum_bytes(dst.cpu + 4096, 64));
  /* NOTIFY of the inline-to-memory class: 16 bytes at dst + 8192, the first 8 a timestamp. */
  const uint64_t note = dst.gpu + 8192;
  nvc_push_incr(&p, 5, 0x104, 2, (uint32_t)(note >> 32), (uint32_t)note);
  nvc_push_incr(&p, 5, 0x10C, 1, 0u);
  run_and_wait(&g, ch, &push, 3072, &p, "wait_notify");
  uint64_t stamp;
  memcpy(&stamp, dst.cpu + 8192, sizeof stamp);
  printf("notify_written=%d\n", stamp != 0);
  /* A one-word DMA semaphore release at an address 2 bytes past a word. */
  const uint64_t sem = dst.gpu + 12288 + 2;
  nvc_push_incr(&p, 4, 0x240, 3, (uint32_t)(sem >> 32), (uint32_t)sem, 0x11223344u);
  nvc_push_incr(&p, 4, 0x300, 1, 1u << 3);
  run_and_wait(&g, ch, &push, 4096, &p, "wait_semaphore");
  printf("semaphore_sum=%u\n", sum_bytes(dst.cpu + 12288, 24));
  return 0;
}

/* Channel 1 holds a DMA copy of src behind a host semaphore acquire (sem == 1); the CPU then
 * writes src, and channel 2 releases the semaphore. The copy must read what the CPU wrote, as a
 * GPU reading the guest's memory would: over the host backend, channel 2's submission is the last
 * point where the sentry can send it. */
static int mode_released_by_other(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf src, dst, sem, push;
  make_buf(&g, &src, 65536);
  make_buf(&g, &dst, 65536);
  make_buf(&g, &sem, 4096);
  make_buf(&g, &push, 8192);
  memset(src.cpu, 0x11, 4096);
  const uint32_t ch1 = make_channel(&g, NULL), ch2 = make_channel(&g, NULL);
  struct nvc_push held = {0}, release = {0};
  nvc_push_incr(&held, 0, 0x10, 4, (uint32_t)(sem.gpu >> 32), (uint32_t)sem.gpu, 1u, 1u);
  dma_copy_words(&held, src.gpu, dst.gpu, 4096);
  struct nvgpu_fence f_held, f_release;
  must("submit held", submit(ch1, &push, 0, held.words, held.count, &f_held));
  usleep(50000); /* the sentry's poll backs off meanwhile */
  memset(src.cpu, 0x5A, 4096);
  nvc_push_incr(&release, 0, 0x10, 4, (uint32_t)(sem.gpu >> 32), (uint32_t)sem.gpu, 1u, 2u);
  must("submit release", submit(ch2, &push, 1024, release.words, release.count, &f_release));
  printf("wait_release=%d ", wait_fence(&g, f_release, 5000));
  printf("wait_held=%d\n", wait_fence(&g, f_held, 5000));
  int ok = 1;
  for (uint32_t i = 0; i < 4096; i++) ok &= dst.cpu[i] == 0x5A;
  printf("copied_what_the_cpu_wrote=%d\n", ok);
  return 0;
}

static int mode_budget_loop(int rounds) {
  struct gpu g;
  open_all(&g);
  static uint32_t handles[1 << 17];
  for (int r = 1; r <= rounds; r++) {
    uint32_t n = 0;
    int rc = 0;
    while (n < (1u << 17)) {
      struct nvmap_create cr = {4096, 0};
      rc = nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_CREATE, &cr);
      if (rc != 0) break;
      handles[n++] = cr.handle;
    }
    printf("round=%d created=%u error=%d\n", r, n, rc);
    for (uint32_t i = 0; i < n; i++) {
      struct nvmap_free fr = {handles[i], 0, 0, 0, 0};
      must("FREE", nvc_ioctl(&nv, g.nvmap, NVMAP_IOC_FREE, &fr));
    }
    fflush(stdout);
    if (r == 1 || r == rounds) usleep(300000);
  }
  return 0;
}

static int mode_as(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  /* nvdrv's GPU window (bit 13) is 3 GiB to 22 GiB; big pages from 16 GiB. */
  struct nvgpu_as_alloc_space fixed = {16, 0x20000, 1 /* fixed */, 0, 0x480000000ull};
  int rc = nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &fixed); /* before printf reads the outputs */
  printf("alloc_space_fixed=%d offset=0x%llX\n", rc, (unsigned long long)fixed.offset);
  struct nvgpu_as_alloc_space overlap = {16, 0x20000, 1, 0, 0x480000000ull + 0x20000};
  printf("alloc_space_overlap=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &overlap));
  struct nvgpu_as_alloc_space sparse = {8, 0x20000, 2 /* sparse */, 0, 0x40000 /* alignment */};
  rc = nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &sparse);
  printf(
      "alloc_space_sparse=%d aligned=%d\n", rc,
      (sparse.offset & 0x3FFFF) == 0 && sparse.offset > 0x40000); /* an offset, not the alignment */
  struct buf b;
  make_buf(&g, &b, 8192);
  struct nvgpu_as_map_ex m = {1 /* fixed */, 0, b.handle, 0, 0, 0, fixed.offset};
  printf("map_fixed_in_space=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_MAP_BUFFER_EX, &m));
  struct nvgpu_as_map_ex clash = {1, 0, b.handle, 0, 0, 0, fixed.offset};
  printf("map_fixed_clash=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_MAP_BUFFER_EX, &clash));
  struct nvgpu_as_map_ex badh = {0, 0, 0xFFF0, 0, 0, 0, 0x1000};
  printf("map_bad_handle=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_MAP_BUFFER_EX, &badh));
  struct nvgpu_as_unmap um = {fixed.offset};
  printf("unmap=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_UNMAP_BUFFER, &um));
  printf("unmap_again=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_UNMAP_BUFFER, &um));
  struct nvgpu_as_free_space fs = {0x481240000ull, 1, 0x20000};
  printf("free_space_unknown=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_FREE_SPACE, &fs));
  fs.offset = fixed.offset;
  fs.pages = 16;
  printf("free_space=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_FREE_SPACE, &fs));
  struct nvgpu_as_bind_channel notch = {g.nvmap};
  printf("bind_not_channel=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_BIND_CHANNEL, &notch));
  return 0;
}

/* A channel made with the plain ALLOC_GPFIFO (not a power of two: rounded up, as simulated), a
 * submission on it, and its error notifier armed then turned off. */
#define NVGPU_CH_ALLOC_GPFIFO 0x40084805u
static int mode_plain_gpfifo(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  struct buf push, notifier;
  make_buf(&g, &push, 4096);
  make_buf(&g, &notifier, 4096);
  uint32_t ch;
  must("open gpu", nvc_open(&nv, "/dev/nvhost-gpu", &ch));
  uint32_t nvmap_fd = g.nvmap;
  must("SET_NVMAP_FD", nvc_ioctl(&nv, ch, NVGPU_CH_SET_NVMAP_FD, &nvmap_fd));
  struct nvgpu_as_bind_channel bind = {ch};
  must("BIND_CHANNEL", nvc_ioctl(&nv, g.as, NVGPU_AS_BIND_CHANNEL, &bind));
  uint32_t ring[2] = {20, 0};
  printf("alloc_gpfifo=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_GPFIFO, ring));
  struct nvgpu_alloc_obj_ctx obj = {0xB197, 0, 0};
  must("ALLOC_OBJ_CTX", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj));
  struct nvc_push q = {0};
  nvc_push_incr(&q, 0, 0x000, 1, 0xB197u);
  struct nvgpu_fence f;
  printf("submit=%d\n", submit(ch, &push, 0, q.words, q.count, &f));
  printf("wait=%d\n", wait_fence(&g, f, 5000));
  struct nvgpu_set_error_notifier on = {0, 4096, notifier.handle, 0};
  printf("notifier_on=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_SET_ERROR_NOTIFIER, &on));
  struct nvgpu_set_error_notifier off = {0, 0, 0, 0};
  printf("notifier_off=%d\n", nvc_ioctl(&nv, ch, NVGPU_CH_SET_ERROR_NOTIFIER, &off));
  return 0;
}

static int alloc_rc(struct gpu* g, uint32_t size, void* addr) {
  struct nvmap_create cr = {size, 0};
  must("CREATE", nvc_ioctl(&nv, g->nvmap, NVMAP_IOC_CREATE, &cr));
  struct nvmap_alloc al = {cr.handle, 0, 1, 0x1000, 0, {0}, (uint64_t)(uintptr_t)addr};
  return nvc_ioctl(&nv, g->nvmap, NVMAP_IOC_ALLOC, &al);
}

static int mode_budgets(void) {
  struct gpu g;
  open_all(&g);
  make_as(&g);
  uint32_t as2;
  must("open as 2", nvc_open(&nv, "/dev/nvhost-as-gpu", &as2));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .big_page_size = 0x20000};
  printf("second_as=%d\n", nvc_ioctl(&nv, as2, NVGPU_AS_ALLOC_AS_EX, &a));
  uint32_t ch1, ch2;
  must("open gpu", nvc_open(&nv, "/dev/nvhost-gpu", &ch1));
  printf("second_channel=%d\n", nvc_open(&nv, "/dev/nvhost-gpu", &ch2));
  uint8_t* mem = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  printf("pin_16k=%d\n", alloc_rc(&g, 16384, mem));
  printf("pin_past_budget=%d\n", alloc_rc(&g, 65536, mem + 65536));
  printf("sentry_64k=%d\n", alloc_rc(&g, 65536, NULL));
  printf("sentry_past_budget=%d\n", alloc_rc(&g, 16 << 20, NULL));
  printf("pin_addr=0x%llx\n", (unsigned long long)(uintptr_t)mem);
  printf("dump_status=%d\n", nvc_dump_status(&nv));
  return 0;
}

static const char kGpuGuestUsage[] =
    "usage: gpu_guest nvmap | share | fault-unmapped | fault-munmap | bad-subchannel | multi | "
    "chan-wait | budget-loop [N] | as | budgets | plain-gpfifo | gpu-writes | released-by-other\n";

static int known_mode(const char* m) {
  static const char* const kModes[] = {
      "nvmap",        "share",      "fault-unmapped",   "fault-munmap", "bad-subchannel",
      "multi",        "chan-wait",  "budget-loop",      "as",           "budgets",
      "plain-gpfifo", "gpu-writes", "released-by-other"};
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; i++)
    if (strcmp(m, kModes[i]) == 0) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || !known_mode(argv[1])) {
    fprintf(stderr, "gpu_guest: %s\n%s", argc < 2 ? "missing MODE" : "unknown MODE",
            kGpuGuestUsage);
    return 2;
  }
  const char* d = getenv("NVC_DIRECT");
  must("init", nvc_init(&nv, d != NULL && d[0] == '1' ? NVC_VIA_DIRECT : NVC_VIA_NVDRV, 0x800000));
  const char* m = argv[1];
  int rc;
  if (strcmp(m, "nvmap") == 0)
    rc = mode_nvmap();
  else if (strcmp(m, "share") == 0)
    rc = mode_share();
  else if (strcmp(m, "fault-unmapped") == 0)
    rc = mode_fault(0);
  else if (strcmp(m, "fault-munmap") == 0)
    rc = mode_fault(1);
  else if (strcmp(m, "bad-subchannel") == 0)
    rc = mode_fault(2);
  else if (strcmp(m, "multi") == 0)
    rc = mode_multi();
  else if (strcmp(m, "chan-wait") == 0)
    rc = mode_chan_wait();
  else if (strcmp(m, "budget-loop") == 0)
    rc = mode_budget_loop(argc > 2 ? atoi(argv[2]) : 10);
  else if (strcmp(m, "as") == 0)
    rc = mode_as();
  else if (strcmp(m, "budgets") == 0)
    rc = mode_budgets();
  else if (strcmp(m, "plain-gpfifo") == 0)
    rc = mode_plain_gpfifo();
  else if (strcmp(m, "gpu-writes") == 0)
    rc = mode_gpu_writes();
  else if (strcmp(m, "released-by-other") == 0)
    rc = mode_released_by_other();
  else {
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
  }
  printf("done=1\n");
  return rc;
}
