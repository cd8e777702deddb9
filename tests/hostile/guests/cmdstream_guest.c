/* A hostile guest that does through its GPU command stream what its policy refuses it as ioctls
 * ("The GPU's command stream ignores the policy"):
 *
 *   cmdstream_guest bind-dma BYTES   ALLOC_OBJ_CTX(3D) (which the policy may refuse: it goes on),
 *                                    then a pushbuffer that binds the DMA copy class 0xB0B5 and
 *                                    copies BYTES bytes between two of its buffers
 *   cmdstream_guest incr ID COUNT    a pushbuffer that increments syncpoint ID COUNT times with
 *                                    the host class's SYNCPOINTB (ID need not be the guest's)
 *   cmdstream_guest rewrite ID [forge]
 *                                    a pushbuffer that releases a semaphore, submitted on one
 *                                    channel behind a fence of a second channel; while it waits,
 *                                    its words are rewritten to increment syncpoint ID twice,
 *                                    and a submission on the second channel (which pushes guest
 *                                    memory to a host backend) reaches the fence. With `forge`
 *                                    the guest first moves the held submission's own syncpoint to
 *                                    its fence with SYNCPT_INCR, as if the host had finished it,
 *                                    and then waits for a later job of that channel instead
 *   cmdstream_guest gpu-rewrite ID   the GPU itself rewrites a checked pushbuffer before its fetch:
 *                                    a submission held behind a fence of a second channel
 *                                    releases semaphores over the words of the next submission
 *                                    (a semaphore release when checked), making them two
 *                                    SYNCPOINTB increments of ID; then the fence opens
 *   cmdstream_guest window-write     seeks the host backend's private window by probing its
 *                                    address space with fixed ALLOC_SPACEs, then releases a
 *                                    semaphore just past the space it sees (probes, refused,
 *                                    window_end, zone_err, outside_err)
 *
 * Each waits for the submission's fence and prints what happened as key=value pairs:
 * alloc_obj_ctx (the NvError), copied (bytes that arrived), syncpoint (ID's value afterwards),
 * semaphore (what the rewrite modes' semaphore holds), rewritten (gpu-rewrite: 1 when the
 * guest's copy of the second pushbuffer holds the increments afterwards), and what the channel
 * reports: status and info32 of GET_ERROR_NOTIFICATION, error_type and error_info1..5 of
 * GET_ERROR_INFO. Exit 0 once everything ran (the verdict is the test's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nvclient.h"

static struct nvc nv;

static void must(const char* what, int rc) {
  if (rc != 0) {
    fprintf(stderr, "cmdstream_guest: %s failed: %s\n", what, nvc_strerror(&nv, rc));
    exit(1);
  }
}

static void* pages(uint32_t size) {
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return p;
}

struct gpu {
  uint32_t nvmap, ctrl, as, ch;
};

/* A channel as libnx makes one; ALLOC_OBJ_CTX(3D)'s answer is printed, not required. */
static void open_gpu(struct gpu* g) {
  must("nvdrv Initialize", nvc_init(&nv, NVC_VIA_NVDRV, 0x800000));
  must("open /dev/nvmap", nvc_open(&nv, "/dev/nvmap", &g->nvmap));
  must("open /dev/nvhost-ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &g->ctrl));
  must("open /dev/nvhost-as-gpu", nvc_open(&nv, "/dev/nvhost-as-gpu", &g->as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .as_fd = -1, .big_page_size = 0x20000};
  must("ALLOC_AS_EX", nvc_ioctl(&nv, g->as, NVGPU_AS_ALLOC_AS_EX, &a));
  must("open /dev/nvhost-gpu", nvc_open(&nv, "/dev/nvhost-gpu", &g->ch));
  uint32_t nvmap_fd = g->nvmap;
  must("SET_NVMAP_FD", nvc_ioctl(&nv, g->ch, NVGPU_CH_SET_NVMAP_FD, &nvmap_fd));
  struct nvgpu_as_bind_channel bind = {g->ch};
  must("BIND_CHANNEL", nvc_ioctl(&nv, g->as, NVGPU_AS_BIND_CHANNEL, &bind));
  struct nvgpu_alloc_gpfifo_ex gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 64;
  gp.flags = 1;
  must("ALLOC_GPFIFO_EX2", nvc_ioctl(&nv, g->ch, NVGPU_CH_ALLOC_GPFIFO_EX2, &gp));
  struct nvgpu_alloc_obj_ctx obj = {0xB197, 0, 0};
  printf("alloc_obj_ctx=%d\n", nvc_ioctl(&nv, g->ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj));
}

static uint64_t map(struct gpu* g, void* cpu, uint32_t size) {
  uint32_t handle;
  uint64_t va;
  must("map memory", nvc_map_memory(&nv, g->nvmap, g->as, cpu, size, 0x1000, &handle, &va));
  return va;
}

static void wait_fence(struct gpu* g, struct nvgpu_fence f) {
  struct nvhost_wait_ex w = {f.id, f.value, 10000, 0};
  must("SYNCPT_WAITEX", nvc_ioctl(&nv, g->ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
}

/* Prints channel `ch`'s error reports. */
static void report(uint32_t ch) {
  struct nvgpu_error_notification n;
  memset(&n, 0, sizeof n);
  must("GET_ERROR_NOTIFICATION", nvc_ioctl(&nv, ch, NVGPU_CH_GET_ERROR_NOTIFICATION, &n));
  struct nvgpu_error_info info;
  memset(&info, 0, sizeof info);
  must("GET_ERROR_INFO", nvc_ioctl(&nv, ch, NVGPU_CH_GET_ERROR_INFO, &info));
  printf("status=%u info32=%u error_type=%u", n.status, n.info32, info.type);
  for (int i = 0; i < 5; i++) printf(" error_info%d=0x%X", i + 1, info.info[i]);
  printf("\n");
}

/* Submits the words in `pb` (copied to `push` at GPU address push_va) with a fence, waits for it
 * and prints the channel's error reports. */
static void run(struct gpu* g, struct nvc_push* pb, void* push, uint64_t push_va) {
  memcpy(push, pb->words, pb->count * 4);
  struct nvgpu_gpfifo_entry e = nvc_gpfifo_entry(push_va, pb->count);
  struct nvgpu_fence f = {0, 0};
  must("SUBMIT_GPFIFO", nvc_submit(&nv, g->ch, &e, 1, NVGPU_SUBMIT_FENCE_GET, &f));
  /* A channel that stops releases its fences, so this returns either way. */
  wait_fence(g, f);
  report(g->ch);
}

static int bind_dma(uint32_t size) {
  struct gpu g;
  open_gpu(&g);
  uint8_t* src = pages(size);
  uint8_t* dst = pages(size);
  void* push = pages(4096);
  for (uint32_t i = 0; i < size; i++) src[i] = (uint8_t)((i * 13) | 1); /* never 0, as dst starts */
  const uint64_t src_va = map(&g, src, size), dst_va = map(&g, dst, size);
  const uint64_t push_va = map(&g, push, 4096);
  struct nvc_push pb = {0};
  nvc_push_incr(&pb, 4, 0x000, 1, 0xB0B5u); /* SET_OBJECT: the DMA copy class */
  nvc_push_incr(&pb, 4, 0x400, 8, (uint32_t)(src_va >> 32), (uint32_t)src_va,
                (uint32_t)(dst_va >> 32), (uint32_t)dst_va, 4096u, 4096u, 4096u, size / 4096);
  nvc_push_incr(&pb, 4, 0x300, 1, 2u | (1u << 7) | (1u << 8) | (1u << 9)); /* pitch, multi-line */
  run(&g, &pb, push, push_va);
  uint32_t copied = 0;
  for (uint32_t i = 0; i < size; i++) copied += dst[i] == src[i];
  printf("copied=%u\n", copied);
  free(pb.words);
  return 0;
}

static int incr(uint32_t id, uint32_t count) {
  struct gpu g;
  open_gpu(&g);
  void* push = pages(4096);
  const uint64_t push_va = map(&g, push, 4096);
  struct nvc_push pb = {0};
  for (uint32_t i = 0; i < count; i++) nvc_push_incr(&pb, 0, 0x70, 2, 0u, (id << 8) | 1u);
  run(&g, &pb, push, push_va);
  struct nvhost_id_value v = {id, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, g.ctrl, NVHOST_CTRL_SYNCPT_READ, &v));
  printf("syncpoint=%u\n", v.value);
  free(pb.words);
  return 0;
}

/* A host NOP on channel `ch` from `push`, with a fence; the fence. */
static struct nvgpu_fence nop(uint32_t ch, uint32_t* push, uint64_t push_va) {
  push[0] = 0x20010002u; /* incrementing write of one argument to the host NOP (0x08) */
  push[1] = 0;
  struct nvgpu_gpfifo_entry e = nvc_gpfifo_entry(push_va, 2);
  struct nvgpu_fence f = {0, 0};
  must("SUBMIT_GPFIFO (nop)", nvc_submit(&nv, ch, &e, 1, NVGPU_SUBMIT_FENCE_GET, &f));
  return f;
}

/* The rewrite of a pushbuffer that was checked and submitted but not yet fetched: whatever the
 * host's GPU fetches must be what the sentry checked (the semaphore), never the rewrite. */
static int rewrite(uint32_t id, int forge) {
  struct gpu g;
  open_gpu(&g);
  uint32_t other;
  const char* step;
  must("the second channel", nvc_make_channel(&nv, g.nvmap, g.as, 64, &other, &step));
  uint32_t* push = pages(4096);
  uint32_t* other_push = pages(4096);
  uint32_t* sem = pages(4096);
  uint32_t* idle_push = pages(4096);
  const uint64_t push_va = map(&g, push, 4096), other_va = map(&g, other_push, 4096);
  const uint64_t sem_va = map(&g, sem, 4096), idle_va = map(&g, idle_push, 4096);
  /* The second channel's syncpoint, from its first fence. */
  struct nvgpu_fence gate = nop(other, other_push, other_va);
  wait_fence(&g, gate);
  /* Six words either way: a 4-byte semaphore release of 0x600D (and a NOP word), or two
   * SYNCPOINTB increments of `id`. */
  struct nvc_push good = {0}, evil = {0};
  nvc_push_incr(&good, 0, 0x10, 4, (uint32_t)(sem_va >> 32), (uint32_t)sem_va, 0x600Du,
                2u | (1u << 24));
  nvc_push_inline(&good, 0, 0x08, 0);
  nvc_push_incr(&evil, 0, 0x70, 2, 0u, (id << 8) | 1u);
  nvc_push_incr(&evil, 0, 0x70, 2, 0u, (id << 8) | 1u);
  if (good.count != 6 || evil.count != 6) {
    fprintf(stderr, "cmdstream_guest: pushbuffers of %u and %u words\n", good.count, evil.count);
    return 1;
  }
  memcpy(push, good.words, 24);
  struct nvgpu_gpfifo_entry e = nvc_gpfifo_entry(push_va, 6);
  /* Not fetched until the second channel's next job ends. */
  struct nvgpu_fence f = {gate.id, gate.value + 1};
  must("SUBMIT_GPFIFO (held)",
       nvc_submit(&nv, g.ch, &e, 1, NVGPU_SUBMIT_FENCE_WAIT | NVGPU_SUBMIT_FENCE_GET, &f));
  if (forge) {
    struct nvhost_id_value v = {f.id, 0};
    must("SYNCPT_READ", nvc_ioctl(&nv, g.ctrl, NVHOST_CTRL_SYNCPT_READ, &v));
    for (uint32_t n = f.value - v.value; n != 0 && n < 16; n--) {
      uint32_t incr = f.id;
      must("SYNCPT_INCR", nvc_ioctl(&nv, g.ctrl, NVHOST_CTRL_SYNCPT_INCR, &incr));
    }
  }
  memcpy(push, evil.words, 24);
  /* Guest memory moves to a host backend's host before this reaches it; its job opens the gate.
   * That the gate opened says nothing of the held job itself: a GPU runs it after. */
  wait_fence(&g, nop(other, other_push, other_va));
  if (forge) {
    /* The guest reached f itself, so f says nothing of the held job either: it waits for idle as a
     * client does, with a job after it on the same channel. Its fence is reached only by the held
     * job's own increments or its own, both after the held job's work. */
    f = nop(g.ch, idle_push, idle_va);
  }
  wait_fence(&g, f);
  printf("semaphore=0x%X\n", sem[0]);
  struct nvhost_id_value v = {id, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, g.ctrl, NVHOST_CTRL_SYNCPT_READ, &v));
  printf("syncpoint=%u\n", v.value);
  report(g.ch);
  free(good.words);
  free(evil.words);
  return 0;
}

/* The GPU rewrites a pushbuffer between its check and its fetch: S1, held behind a fence of the
 * second channel, releases semaphores whose payloads are the words of two SYNCPOINTB increments
 * of `id`, at the GPU address of S2's pushbuffer; S2, submitted after S1 on the same channel,
 * holds a semaphore release of 0x600D when it is checked. The second channel's next job opens the
 * fence: S1 runs, then the GPU fetches S2. */
static int gpu_rewrite(uint32_t id) {
  struct gpu g;
  open_gpu(&g);
  uint32_t other;
  const char* step;
  must("the second channel", nvc_make_channel(&nv, g.nvmap, g.as, 64, &other, &step));
  uint32_t* s1 = pages(4096);
  uint32_t* s2 = pages(4096);
  uint32_t* other_push = pages(4096);
  uint32_t* sem = pages(4096);
  const uint64_t s1_va = map(&g, s1, 4096), s2_va = map(&g, s2, 4096);
  const uint64_t other_va = map(&g, other_push, 4096), sem_va = map(&g, sem, 4096);
  struct nvgpu_fence gate = nop(other, other_push, other_va);
  wait_fence(&g, gate);
  struct nvc_push good = {0}, evil = {0}, writer = {0};
  nvc_push_incr(&good, 0, 0x10, 4, (uint32_t)(sem_va >> 32), (uint32_t)sem_va, 0x600Du,
                2u | (1u << 24));
  nvc_push_inline(&good, 0, 0x08, 0);
  nvc_push_incr(&evil, 0, 0x70, 2, 0u, (id << 8) | 1u);
  nvc_push_incr(&evil, 0, 0x70, 2, 0u, (id << 8) | 1u);
  if (good.count != 6 || evil.count != 6) {
    fprintf(stderr, "cmdstream_guest: pushbuffers of %u and %u words\n", good.count, evil.count);
    return 1;
  }
  /* S1: one 4-byte semaphore release per word of S2. */
  for (uint32_t i = 0; i < 6; i++) {
    const uint64_t at = s2_va + 4 * i;
    nvc_push_incr(&writer, 0, 0x10, 4, (uint32_t)(at >> 32), (uint32_t)at, evil.words[i],
                  2u | (1u << 24));
  }
  memcpy(s1, writer.words, writer.count * 4);
  struct nvgpu_gpfifo_entry e1 = nvc_gpfifo_entry(s1_va, writer.count);
  struct nvgpu_fence f1 = {gate.id, gate.value + 1};
  must("SUBMIT_GPFIFO (S1, held)",
       nvc_submit(&nv, g.ch, &e1, 1, NVGPU_SUBMIT_FENCE_WAIT | NVGPU_SUBMIT_FENCE_GET, &f1));
  memcpy(s2, good.words, 24);
  struct nvgpu_gpfifo_entry e2 = nvc_gpfifo_entry(s2_va, 6);
  struct nvgpu_fence f2 = {0, 0};
  must("SUBMIT_GPFIFO (S2)", nvc_submit(&nv, g.ch, &e2, 1, NVGPU_SUBMIT_FENCE_GET, &f2));
  wait_fence(&g, nop(other, other_push, other_va)); /* opens the fence */
  wait_fence(&g, f2);
  printf("semaphore=0x%X\n", sem[0]);
  printf("rewritten=%d\n", memcmp(s2, evil.words, 24) == 0);
  struct nvhost_id_value v = {id, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, g.ctrl, NVHOST_CTRL_SYNCPT_READ, &v));
  printf("syncpoint=%u\n", v.value);
  report(g.ch);
  free(good.words);
  free(evil.words);
  free(writer.words);
  return 0;
}

/* The sentry's private window (where the host backend keeps its copies of checked pushbuffers)
 * sought by probing: a binary search with fixed ALLOC_SPACEs of [x, end of the largest region it
 * sees), which once failed while they met the window and so found its end in about 20 probes
 * (refused: how many failed). Then fixed ALLOC_SPACEs of 128 MiB just past that end (zone_err) and
 * far beyond any region (outside_err), and a semaphore release just past the end, whose address is
 * in the stream. */
static int window_write(void) {
  struct gpu g;
  open_gpu(&g);
  struct {
    uint64_t buf_addr;
    uint32_t buf_size, reserved;
    struct {
      uint64_t offset;
      uint32_t page_size, reserved;
      uint64_t pages;
    } r[2];
  } v;
  memset(&v, 0, sizeof v);
  v.buf_size = sizeof v.r;
  must("GET_VA_REGIONS", nvc_ioctl(&nv, g.as, 0xC0404108u, &v));
  int big = v.r[1].pages * v.r[1].page_size > v.r[0].pages * v.r[0].page_size;
  const uint64_t page = v.r[big].page_size, top = v.r[big].offset + v.r[big].pages * page;
  uint64_t lo = v.r[big].offset, hi = top; /* [hi, top) reservable; [lo, top) not */
  int probes = 0, refused = 0;
  while (hi - lo > page) {
    const uint64_t mid = lo + (hi - lo) / page / 2 * page;
    struct nvgpu_as_alloc_space a = {(uint32_t)((top - mid) / page), (uint32_t)page, 1, 0, mid};
    probes++;
    if (nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &a) == 0) {
      struct nvgpu_as_free_space f = {mid, a.pages, (uint32_t)page};
      must("FREE_SPACE", nvc_ioctl(&nv, g.as, NVGPU_AS_FREE_SPACE, &f));
      hi = mid;
    } else {
      refused++;
      lo = mid;
    }
  }
  printf("probes=%d\nrefused=%d\nwindow_end=0x%llX\n", probes, refused, (unsigned long long)hi);
  const uint32_t window_pages = (uint32_t)((128u << 20) / page);
  struct nvgpu_as_alloc_space past = {window_pages, (uint32_t)page, 1, 0, top};
  struct nvgpu_as_alloc_space far = {window_pages, (uint32_t)page, 1, 0, top << 4};
  printf("zone_err=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &past));
  printf("outside_err=%d\n", nvc_ioctl(&nv, g.as, NVGPU_AS_ALLOC_SPACE, &far));
  void* push = pages(4096);
  const uint64_t push_va = map(&g, push, 4096);
  struct nvc_push pb = {0};
  nvc_push_incr(&pb, 0, 0x10, 4, (uint32_t)(top >> 32), (uint32_t)top, 0xBADu, 2u | (1u << 24));
  run(&g, &pb, push, push_va);
  free(pb.words);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "bind-dma") == 0)
    return bind_dma((uint32_t)strtoul(argv[2], NULL, 0));
  if (argc == 4 && strcmp(argv[1], "incr") == 0)
    return incr((uint32_t)strtoul(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0));
  if ((argc == 3 || (argc == 4 && strcmp(argv[3], "forge") == 0)) &&
      strcmp(argv[1], "rewrite") == 0)
    return rewrite((uint32_t)strtoul(argv[2], NULL, 0), argc == 4);
  if (argc == 2 && strcmp(argv[1], "window-write") == 0) return window_write();
  if (argc == 3 && strcmp(argv[1], "gpu-rewrite") == 0)
    return gpu_rewrite((uint32_t)strtoul(argv[2], NULL, 0));
  fprintf(stderr,
          "usage: cmdstream_guest bind-dma BYTES | incr ID COUNT | rewrite ID [forge] | "
          "gpu-rewrite ID | window-write\n");
  return 2;
}
