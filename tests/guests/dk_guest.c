/* A guest that drives a GPU queue the way deko3d does over libnx, in this project's own
 * code: libnx's channel (ALLOC_GPFIFO_EX2's fence, ALLOC_OBJ_CTX of 3D only, SET_ERROR_NOTIFIER 1),
 * deko3d's engine set-up (3D, compute, copy, inline-to-memory and 2D bound in the pushbuffer), and
 * deko3d's way of ending a submission: the 3D class's syncpoint action (INCREMENT_SYNC_POINT,
 * 0x00110000 | syncpoint: increment, flush; twice when flushing) and a report semaphore release,
 * submitted with "increment by value" so the fence is computed by the client, as libnx does.
 *
 *   dk_guest   runs every check and prints key=value results; exit 0 when all held:
 *   fences=N/M          submissions whose client-computed fence was reached (SYNCPT_WAITEX)
 *   fence_matches=1     the fence the submit returned equals the one libnx computes
 *   drained=1           eight queued submissions of copies all done after waiting for the last
 *   read_eq_max=1       SYNCPT_READ equals SYNCPT_READ_MAX once the queue drained
 *   flipy=1             a DMA copy from the last row with PITCH_IN = -pitch mirrored the image
 *   fault_type, fault_addr, fault_access, fault_expected  GET_ERROR_INFO of a write to an
 *                       unmapped address, decoded as deko3d decodes it
 *   read_fault_access   the same for a read
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "nvclient.h"

#define SUB_3D 0u
#define SUB_COMPUTE 1u
#define SUB_I2M 2u
#define SUB_2D 3u
#define SUB_COPY 4u

static struct nvc nv;
static uint32_t nvmap, ctrl, as;

static void must(const char* what, int rc) {
  if (rc != 0) {
    fprintf(stderr, "dk_guest: %s failed: %s\n", what, nvc_strerror(&nv, rc));
    exit(1);
  }
}

struct mem {
  uint8_t* cpu;
  uint64_t gpu;
  uint32_t size;
};

static struct mem alloc_mem(uint32_t size) {
  struct mem m;
  m.size = size;
  m.cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m.cpu == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  uint32_t handle;
  must("map memory", nvc_map_memory(&nv, nvmap, as, m.cpu, size, 0x1000, &handle, &m.gpu));
  return m;
}

/* A queue: libnx's channel and fence bookkeeping, deko3d's command memory. */
struct queue {
  uint32_t ch;
  struct nvgpu_fence fence; /* what libnx computes: ALLOC_GPFIFO_EX2's, plus the increments */
  uint32_t fence_incr;      /* increments pushed since the last kickoff */
  struct mem cmd;           /* command memory, used as a ring of segments */
  uint32_t cmd_used;        /* words */
  struct nvc_push pb;       /* the segment being built */
  struct nvgpu_gpfifo_entry entries[16];
  uint32_t num_entries;
  struct mem sem; /* deko3d's per-queue fence semaphore */
  uint32_t sequence;
  int fence_matches;
};

static void queue_open(struct queue* q) {
  memset(q, 0, sizeof *q);
  q->fence_matches = 1;
  must("open /dev/nvhost-gpu", nvc_open(&nv, "/dev/nvhost-gpu", &q->ch));
  struct nvgpu_as_bind_channel bind = {q->ch};
  must("BIND_CHANNEL", nvc_ioctl(&nv, as, NVGPU_AS_BIND_CHANNEL, &bind));
  struct nvgpu_alloc_gpfifo_ex gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 0x800;
  gp.flags = 1;
  must("ALLOC_GPFIFO_EX2", nvc_ioctl(&nv, q->ch, NVGPU_CH_ALLOC_GPFIFO_EX2, &gp));
  q->fence = gp.fence;
  struct nvgpu_alloc_obj_ctx obj = {0xB197, 0, 0};
  must("ALLOC_OBJ_CTX", nvc_ioctl(&nv, q->ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj));
  struct nvgpu_set_error_notifier en = {0, 0, 1, 0}; /* libnx: no memory, ask with GET_ERROR_* */
  must("SET_ERROR_NOTIFIER", nvc_ioctl(&nv, q->ch, NVGPU_CH_SET_ERROR_NOTIFIER, &en));
  q->cmd = alloc_mem(1u << 20);
  q->sem = alloc_mem(4096);
  /* deko3d's setupEngines: every engine bound in the pushbuffer. */
  nvc_push_incr(&q->pb, SUB_3D, 0x000, 1, 0xB197u);
  nvc_push_incr(&q->pb, SUB_COMPUTE, 0x000, 1, 0xB1C0u);
  nvc_push_incr(&q->pb, SUB_COPY, 0x000, 1, 0xB0B5u);
  nvc_push_incr(&q->pb, SUB_I2M, 0x000, 1, 0xA140u);
  nvc_push_incr(&q->pb, SUB_2D, 0x000, 1, 0x902Du);
}

/* The segment built so far becomes a GPFIFO entry. */
static void queue_split(struct queue* q) {
  if (q->pb.count == 0) return;
  if ((q->cmd_used + q->pb.count) * 4 > q->cmd.size) q->cmd_used = 0; /* the ring wraps */
  memcpy(q->cmd.cpu + q->cmd_used * 4, q->pb.words, q->pb.count * 4);
  q->entries[q->num_entries++] = nvc_gpfifo_entry(q->cmd.gpu + q->cmd_used * 4, q->pb.count);
  q->cmd_used += q->pb.count;
  q->pb.count = 0;
}

/* deko3d's signalFence(flush): the syncpoint action (twice when flushing), then the queue's
 * semaphore released with the next sequence. Returns the sequence. */
static uint32_t queue_signal(struct queue* q, int flush) {
  uint32_t action = q->fence.id | (1u << 20); /* increment */
  if (flush) {
    action |= 1u << 16; /* flush: 0x00110000 | id */
    nvc_push_incr(&q->pb, SUB_3D, 0x2C8, 1, action);
    nvc_push_incr(&q->pb, SUB_3D, 0x2C8, 1, action);
    q->fence_incr += 2;
  } else {
    nvc_push_incr(&q->pb, SUB_3D, 0x2C8, 1, action);
    q->fence_incr += 1;
  }
  q->sequence++;
  nvc_push_incr(&q->pb, SUB_3D, 0x1B00, 4, (uint32_t)(q->sem.gpu >> 32), (uint32_t)q->sem.gpu,
                q->sequence, (1u << 4) /* fence */ | (1u << 28) /* one word */);
  return q->sequence;
}

/* libnx's nvGpuChannelKickoff: hardware format, "increment by value" with the count pushed;
 * libnx adds it to its own fence. Returns the fence to wait for. */
static struct nvgpu_fence queue_kickoff(struct queue* q) {
  queue_split(q);
  struct nvgpu_fence f = {0, q->fence_incr};
  uint32_t flags = NVGPU_SUBMIT_HW_FORMAT | (q->fence_incr ? NVGPU_SUBMIT_INCR_BY_VALUE : 0);
  must("SUBMIT_GPFIFO", nvc_submit(&nv, q->ch, q->entries, q->num_entries, flags, &f));
  q->fence.value += q->fence_incr;
  if (q->fence_incr && (f.id != q->fence.id || f.value != q->fence.value)) q->fence_matches = 0;
  q->fence_incr = 0;
  q->num_entries = 0;
  return q->fence;
}

static int fence_wait(struct nvgpu_fence f, int timeout_ms) {
  struct nvhost_wait_ex w = {f.id, f.value, timeout_ms, 0};
  return nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w);
}

/* deko3d's DkFence::wait for its internal fences: the syncpoint fence, then its semaphore,
 * which the GPU releases after the syncpoint action (so it may lag the fence a little); the
 * fence is waited for again until the semaphore has the sequence (bounded by `timeout_ms`). */
static int dk_fence_wait(struct queue* q, struct nvgpu_fence f, uint32_t sequence, int timeout_ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (fence_wait(f, timeout_ms) != 0) return 0;
    if ((int32_t)(*(volatile uint32_t*)q->sem.cpu - sequence) >= 0) return 1;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > timeout_ms)
      return 0;
  }
}

static void copy(struct queue* q, uint64_t src, uint64_t dst, int32_t pitch_in, int32_t pitch_out,
                 uint32_t line, uint32_t lines) {
  nvc_push_incr(&q->pb, SUB_COPY, 0x400, 8, (uint32_t)(src >> 32), (uint32_t)src,
                (uint32_t)(dst >> 32), (uint32_t)dst, (uint32_t)pitch_in, (uint32_t)pitch_out, line,
                lines);
  nvc_push_incr(&q->pb, SUB_COPY, 0x300, 1, 2u | (1u << 2) | (1u << 7) | (1u << 8) | (1u << 9));
}

int main(int argc, char** argv) {
  if (argc != 1) {
    fprintf(stderr, "dk_guest: takes no arguments, not '%s'\nusage: dk_guest\n", argv[1]);
    return 2;
  }
  must("nvdrv Initialize", nvc_init(&nv, NVC_VIA_NVDRV, 0x800000));
  must("open /dev/nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));
  must("open /dev/nvhost-ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &ctrl));
  must("open /dev/nvhost-as-gpu", nvc_open(&nv, "/dev/nvhost-as-gpu", &as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .as_fd = -1, .big_page_size = 0x20000};
  must("ALLOC_AS_EX", nvc_ioctl(&nv, as, NVGPU_AS_ALLOC_AS_EX, &a));
  int ok = 1;

  /* 1. Fences: 24 submissions, each a small inline-to-memory write ended with a (flushing)
   *    signal, each waited for through the fence libnx computed. */
  struct queue q;
  queue_open(&q);
  struct mem data = alloc_mem(4096);
  const int kSubmits = 24;
  int reached = 0;
  for (int i = 0; i < kSubmits; i++) {
    nvc_push_incr(&q.pb, SUB_I2M, 0x180, 4, 4u, 1u, (uint32_t)(data.gpu >> 32),
                  (uint32_t)data.gpu + 4 * i);
    nvc_push_incr(&q.pb, SUB_I2M, 0x1B0, 1, 1u);
    nvc_push_incr(&q.pb, SUB_I2M, 0x1B4, 1, 0xD0000000u | (uint32_t)i);
    uint32_t seq = queue_signal(&q, i % 2);
    struct nvgpu_fence f = queue_kickoff(&q);
    /* The data was written before the syncpoint action: visible once the fence is reached. */
    if (fence_wait(f, 10000) == 0 && ((uint32_t*)data.cpu)[i] == (0xD0000000u | (uint32_t)i) &&
        dk_fence_wait(&q, f, seq, 10000))
      reached++;
    else
      break; /* the later fences wait on this one */
  }
  printf("fences=%d/%d fence_matches=%d\n", reached, kSubmits, q.fence_matches);
  ok &= reached == kSubmits && q.fence_matches;

  /* 2. A queue that drains (dkQueueWaitIdle): eight submissions of 64 KiB copies queued without
   *    waiting, then a flushing signal and a wait for its fence only. */
  const uint32_t kCopy = 64 * 1024;
  struct mem src = alloc_mem(8 * kCopy), dst = alloc_mem(8 * kCopy);
  for (uint32_t i = 0; i < 8 * kCopy; i++) src.cpu[i] = (uint8_t)((i * 7) | 1);
  for (int i = 0; i < 8; i++) {
    copy(&q, src.gpu + i * kCopy, dst.gpu + i * kCopy, 4096, 4096, 4096, kCopy / 4096);
    queue_signal(&q, 0);
    queue_kickoff(&q);
  }
  uint32_t last = queue_signal(&q, 1);
  struct nvgpu_fence idle = queue_kickoff(&q);
  int drained = fence_wait(idle, 10000) == 0 && memcmp(src.cpu, dst.cpu, 8 * kCopy) == 0 &&
                dk_fence_wait(&q, idle, last, 10000);
  struct nvhost_id_value now = {idle.id, 0}, max = {idle.id, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ, &now));
  must("SYNCPT_READ_MAX", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ_MAX, &max));
  printf("drained=%d read_eq_max=%d syncpt_read=%u syncpt_read_max=%u\n", drained,
         now.value == max.value, now.value, max.value);
  ok &= drained && now.value == max.value;

  /* 3. FlipY: deko3d's copy of a linear image upside down, the source at its last row with a
   *    negative pitch (PITCH_IN 0xFFFFFFC0 for 64-byte rows). */
  const uint32_t kRow = 64, kRows = 16;
  struct mem img = alloc_mem(4096), flipped = alloc_mem(4096);
  for (uint32_t r = 0; r < kRows; r++) memset(img.cpu + r * kRow, (int)(r + 1), kRow);
  copy(&q, img.gpu + (kRows - 1) * kRow, flipped.gpu, -(int32_t)kRow, (int32_t)kRow, kRow, kRows);
  queue_signal(&q, 1);
  int flipy = fence_wait(queue_kickoff(&q), 10000) == 0;
  for (uint32_t r = 0; r < kRows; r++)
    for (uint32_t b = 0; b < kRow; b++) flipy &= flipped.cpu[r * kRow + b] == kRows - r;
  printf("flipy=%d\n", flipy);
  ok &= flipy;

  /* 4. MMU faults, decoded as deko3d's Queue::checkError does: type 1, address from info[1]
   *    (high word) and info[2] (low word), info[3] == 2 for a write. */
  const uint64_t unmapped = 0x487654000ull;
  for (int write = 1; write >= 0; write--) {
    struct queue f;
    queue_open(&f);
    if (write)
      copy(&f, src.gpu, unmapped, 4096, 4096, 4096, 1);
    else
      copy(&f, unmapped, dst.gpu, 4096, 4096, 4096, 1);
    queue_signal(&f, 1);
    struct nvgpu_fence fe = queue_kickoff(&f);
    must("wait for the faulting queue", fence_wait(fe, 10000)); /* a failed channel releases it */
    struct nvgpu_error_notification n;
    memset(&n, 0, sizeof n);
    must("GET_ERROR_NOTIFICATION", nvc_ioctl(&nv, f.ch, NVGPU_CH_GET_ERROR_NOTIFICATION, &n));
    struct nvgpu_error_info e;
    memset(&e, 0, sizeof e);
    must("GET_ERROR_INFO", nvc_ioctl(&nv, f.ch, NVGPU_CH_GET_ERROR_INFO, &e));
    const uint64_t addr = ((uint64_t)e.info[1] << 32) | e.info[2];
    const char* access = e.info[3] == 2 ? "write" : "read";
    if (write) {
      printf(
          "fault_status=%u fault_type=%u fault_addr=0x%llx fault_expected=0x%llx fault_access=%s\n",
          n.status, e.type, (unsigned long long)addr, (unsigned long long)unmapped, access);
      ok &= n.status != 0 && e.type == 1 && addr == unmapped && e.info[3] == 2;
    } else {
      printf("read_fault_type=%u read_fault_addr=0x%llx read_fault_access=%s\n", e.type,
             (unsigned long long)addr, access);
      ok &= e.type == 1 && addr == unmapped && e.info[3] != 2;
    }
  }
  printf("dk_guest=%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
