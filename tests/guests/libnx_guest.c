/* A guest that follows libnx's own GPU sequence through /dev/nvdrv, in this project's
 * code, with libnx's order of calls, field values and flags as facts (docs/guest-abi.md, "The
 * libnx sequence"):
 *   nvInitialize: Initialize with 0x800000 bytes of transfer memory;
 *   nvGpuCreate: /dev/nvhost-ctrl-gpu GET_CHARACTERISTICS, ZCULL_GET_CTX_SIZE, ZCULL_GET_INFO,
 *     GET_TPC_MASKS; nvFenceInit: /dev/nvhost-ctrl; nvMapInit: /dev/nvmap;
 *   nvAddressSpaceCreate: /dev/nvhost-as-gpu, ALLOC_AS_EX {flags 1, big page size};
 *   nvGpuChannelCreate: /dev/nvhost-gpu, SET_NVMAP_FD, BIND_CHANNEL, ALLOC_GPFIFO_EX2 {0x800
 *     entries, flags 1}, ALLOC_OBJ_CTX {3D, 0}, QueryEvent(3: error notifier),
 *     SET_ERROR_NOTIFIER {offset 0, size 0, enable 1}, SET_PRIORITY {100}; nvChannelSetTimeout;
 *     nvGpuChannelZcullBind {va, mode 2 (separate buffer)};
 *   nvGpuChannelKickoff: flags HW_FORMAT; SUBMIT_GPFIFO with the entries inline before 4.0.0,
 *     KICKOFF_PB (SUBMIT_GPFIFO2) with the entries in Ioctl2's buffer from 4.0.0; Busy: sleep
 *     and retry;
 *   nvFenceWait: at 1.0.0 SYNCPT_WAIT_EVENT, and on Timeout QueryEvent of the event it names;
 *     from 2.0.0 an event slot (ALLOC_EVENT, QueryEvent 0x10000000 | slot) and WAIT_EVENT_EX, on
 *     Timeout a wait on that event.
 *
 *   libnx_guest MAJOR BIG_PAGE_SIZE   (MAJOR: the firmware's major version, as hosversion gives
 *                                      libnx)
 * Prints key=value results and exits 0 when every step answered as libnx expects:
 *   init=0 as=0 channel=0 zcull=0 submit=<path> timeout_path=1 fence_wait=<path> reached=1
 *   overflow_busy=N overflow_done=1 fault_event=1 fault_status=<nonzero> */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nvclient.h"

#define NV_TIMEOUT 5 /* NvError Timeout */
#define NV_BUSY 0xE  /* NvError Busy */
#define CTRL_WAIT_EVENT 0xC010001Du
#define CTRL_WAIT_EVENT_EX 0xC010001Eu
#define CTRL_ALLOC_EVENT 0xC004001Fu
#define CTRL_FREE_EVENT 0xC0040020u
#define CH_SET_TIMEOUT 0x40044803u
#define CH_ZCULL_BIND 0xC010480Bu
#define GPU_GET_TPC_MASKS 0xC0184706u

static struct nvc nv;
static uint32_t ctrl, nvmap, as, ch;
static int major;
static int all_held = 1; /* every check answered as libnx expects */

static void check(const char* key, int held) {
  printf("%s=%d ", key, held);
  if (!held) all_held = 0;
}

static void must(const char* what, int rc) {
  if (rc != 0) {
    printf("failed=%s error=%d\n", what, rc);
    fprintf(stderr, "libnx_guest: %s failed: %s\n", what, nvc_strerror(&nv, rc));
    exit(1);
  }
}

struct mem {
  uint8_t* cpu;
  uint64_t gpu;
};

static struct mem alloc_mem(uint32_t size) {
  struct mem m;
  m.cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  uint32_t handle;
  must("map memory", nvc_map_memory(&nv, nvmap, as, m.cpu, size, 0x1000, &handle, &m.gpu));
  return m;
}

/* The channel's fence as libnx keeps it: ALLOC_GPFIFO_EX2's, plus the increments the client
 * pushed (nvGpuChannelIncrFence) and submitted. */
static struct nvgpu_fence chan_fence;

/* nvGpuChannelKickoff's raw call: the path the firmware decides; flags HW_FORMAT, plus "increment
 * by value" with the count in the fence when the pushbuffer increments. Returns the NvError. */
static int kickoff_raw(const struct nvgpu_gpfifo_entry* e, uint32_t n, struct nvgpu_fence* f) {
  const uint32_t flags = NVGPU_SUBMIT_HW_FORMAT | (f->value ? NVGPU_SUBMIT_INCR_BY_VALUE : 0);
  if (major >= 4) {
    struct nvgpu_submit_gpfifo hdr = {0, n, flags, *f};
    int rc = nvc_ioctl2(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO2, &hdr, e, n * sizeof *e);
    if (rc == 0) *f = hdr.fence;
    return rc;
  }
  return nvc_submit(&nv, ch, e, n, flags, f);
}

/* ... and its loop: Busy means the ring is full; sleep (libnx: 100 ms) and try again. `incr`:
 * syncpoint increments the entries push. *f: the fence to wait for, as libnx computes it. */
static int kickoff(const struct nvgpu_gpfifo_entry* e, uint32_t n, uint32_t incr,
                   struct nvgpu_fence* f, int* busy, void (*on_busy)(void)) {
  for (;;) {
    struct nvgpu_fence in = {0, incr};
    int rc = kickoff_raw(e, n, &in);
    if (rc != NV_BUSY) {
      if (rc == 0) {
        chan_fence.value += incr;
        *f = chan_fence;
      }
      return rc;
    }
    ++*busy;
    if (on_busy) on_busy();
    usleep(10000);
  }
}

/* Waits on an eventfd from QueryEvent (libnx's eventWait). */
static int wait_event(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1 ? 0 : -1;
}

/* nvFenceWait with a short timeout first (the fence is not reached yet, so the driver answers
 * Timeout), then the event; `release` makes the GPU go on while we wait on the event. */
static void fence_wait(struct nvgpu_fence f, volatile uint32_t* release) {
  int event_fd = -1;
  if (major < 2) {
    struct nvhost_wait_ex w = {f.id, f.value, 1, 0};
    int rc = nvc_ioctl(&nv, ctrl, CTRL_WAIT_EVENT, &w);
    printf("wait_rc=%d fence=%u/%u event=0x%x ", rc, f.id, f.value, w.value);
    check("timeout_path", rc == NV_TIMEOUT);
    if (rc == NV_TIMEOUT)
      must("QueryEvent(WAIT_EVENT's event)", nvc_query_event(&nv, ctrl, w.value, &event_fd));
    printf("fence_wait=wait_event ");
  } else {
    uint32_t slot = 0;
    must("ALLOC_EVENT", nvc_ioctl(&nv, ctrl, CTRL_ALLOC_EVENT, &slot));
    must("QueryEvent(slot)", nvc_query_event(&nv, ctrl, 0x10000000u | slot, &event_fd));
    struct nvhost_wait_ex w = {f.id, f.value, 1, slot};
    int rc = nvc_ioctl(&nv, ctrl, CTRL_WAIT_EVENT_EX, &w);
    printf("wait_rc=%d fence=%u/%u ", rc, f.id, f.value);
    check("timeout_path", rc == NV_TIMEOUT);
    printf("fence_wait=event_slot ");
  }
  *release = 1; /* the GPU's semaphore acquire is satisfied: the fence will be reached */
  int got = event_fd >= 0 ? wait_event(event_fd, 5000) : -1;
  struct nvhost_id_value r = {f.id, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ, &r));
  check("reached", got == 0 && (int32_t)(r.value - f.value) >= 0);
  printf("\n");
}

/* A pushbuffer that holds the GPU until the CPU writes 1 at `sem` (host semaphore acquire), then
 * increments the channel's syncpoint (host SYNCPOINTA/B: payload, then index << 8 | increment),
 * which the client counts (nvGpuChannelIncrFence). */
static uint32_t push_acquire(uint32_t* words, uint64_t sem) {
  struct nvc_push p;
  memset(&p, 0, sizeof p);
  nvc_push_incr(&p, 0, 0x010, 4, (uint32_t)(sem >> 32), (uint32_t)sem, 1u, 0x1u /* acq equal */);
  nvc_push_incr(&p, 0, 0x070, 2, 0u, (chan_fence.id << 8) | 1u);
  memcpy(words, p.words, p.count * 4);
  return p.count;
}

static volatile uint32_t* g_release;
static void release_gpu(void) { *g_release = 1; }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: libnx_guest MAJOR BIG_PAGE_SIZE\n");
    return 2;
  }
  major = atoi(argv[1]);
  const uint32_t big_page = (uint32_t)strtoul(argv[2], NULL, 0);
  setvbuf(stdout, NULL, _IONBF, 0);

  must("Initialize", nvc_init(&nv, NVC_VIA_NVDRV, 0x800000));
  printf("init=0 ");
  uint32_t ctrl_gpu;
  must("open ctrl-gpu", nvc_open(&nv, "/dev/nvhost-ctrl-gpu", &ctrl_gpu));
  struct nvgpu_get_characteristics gc;
  memset(&gc, 0, sizeof gc);
  gc.buf_size = sizeof gc.gc;
  gc.buf_addr = 1; /* libnx: ignored, but must not be 0 */
  must("GET_CHARACTERISTICS", nvc_ioctl(&nv, ctrl_gpu, NVGPU_GPU_GET_CHARACTERISTICS, &gc));
  uint32_t ctx_size = 0;
  must("ZCULL_GET_CTX_SIZE", nvc_ioctl(&nv, ctrl_gpu, NVGPU_GPU_ZCULL_GET_CTX_SIZE, &ctx_size));
  uint8_t zinfo[0x28];
  must("ZCULL_GET_INFO", nvc_ioctl(&nv, ctrl_gpu, NVGPU_GPU_ZCULL_GET_INFO, zinfo));
  /* libnx's layout: {u32 size, u32 padding, u64 buffer address, u8 out[8]}; the masks come back
   * in `out` (libnx copies them from there). */
  uint32_t tpc_masks[1] = {0};
  struct {
    uint32_t size, pad;
    uint64_t addr;
    uint8_t out[8];
  } tpc = {sizeof tpc_masks, 0, (uint64_t)(uintptr_t)tpc_masks, {0}};
  must("GET_TPC_MASKS", nvc_ioctl(&nv, ctrl_gpu, GPU_GET_TPC_MASKS, &tpc));
  must("open ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &ctrl));
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));

  must("open as", nvc_open(&nv, "/dev/nvhost-as-gpu", &as));
  struct nvgpu_as_alloc_as_ex a;
  memset(&a, 0, sizeof a);
  a.flags = 1;
  a.big_page_size = big_page;
  must("ALLOC_AS_EX", nvc_ioctl(&nv, as, NVGPU_AS_ALLOC_AS_EX, &a));
  printf("as=0 ");

  must("open gpu", nvc_open(&nv, "/dev/nvhost-gpu", &ch));
  uint32_t nvmap_fd = nvmap;
  must("SET_NVMAP_FD", nvc_ioctl(&nv, ch, NVGPU_CH_SET_NVMAP_FD, &nvmap_fd));
  struct nvgpu_as_bind_channel bind = {ch};
  must("BIND_CHANNEL", nvc_ioctl(&nv, as, NVGPU_AS_BIND_CHANNEL, &bind));
  struct nvgpu_alloc_gpfifo_ex gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 0x800;
  gp.num_jobs = 1; /* libnx's "flags" argument, second word */
  must("ALLOC_GPFIFO_EX2", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_GPFIFO_EX2, &gp));
  chan_fence = gp.fence;
  struct nvgpu_alloc_obj_ctx obj = {0xB197, 0, 0};
  must("ALLOC_OBJ_CTX", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj));
  int error_event = -1;
  must("QueryEvent(error notifier)", nvc_query_event(&nv, ch, 3, &error_event));
  struct nvgpu_set_error_notifier en = {0, 0, 1, 0};
  must("SET_ERROR_NOTIFIER", nvc_ioctl(&nv, ch, NVGPU_CH_SET_ERROR_NOTIFIER, &en));
  uint32_t prio = 100;
  must("SET_PRIORITY", nvc_ioctl(&nv, ch, NVGPU_CH_SET_PRIORITY, &prio));
  uint32_t timeout = 5000;
  must("SET_TIMEOUT", nvc_ioctl(&nv, ch, CH_SET_TIMEOUT, &timeout));
  printf("channel=0 ");
  struct mem zcull = alloc_mem(0x100000);
  struct {
    uint64_t va;
    uint32_t mode, pad;
  } zb = {zcull.gpu, 2, 0};
  must("ZCULL_BIND", nvc_ioctl(&nv, ch, CH_ZCULL_BIND, &zb));
  printf("zcull=0 submit=%s\n", major >= 4 ? "kickoff_pb_ioctl2" : "submit_gpfifo_inline");

  /* A submission held by a semaphore acquire: its fence is not reached until the CPU writes. */
  struct mem cmd = alloc_mem(0x10000);
  struct mem sem = alloc_mem(0x1000);
  volatile uint32_t* release = (volatile uint32_t*)sem.cpu;
  uint32_t n = push_acquire((uint32_t*)cmd.cpu, sem.gpu);
  struct nvgpu_gpfifo_entry e = nvc_gpfifo_entry(cmd.gpu, n);
  struct nvgpu_fence f = {0, 0};
  int busy = 0;
  must("kickoff", kickoff(&e, 1, 1, &f, &busy, NULL));
  fence_wait(f, release);

  /* More entries than the ring holds, while the GPU is held again: Busy, then room once the CPU
   * lets the GPU go on. Batches of 0x200 (SUBMIT_GPFIFO's inline limit in libnx). */
  *release = 0;
  struct mem sem2 = alloc_mem(0x1000);
  g_release = (volatile uint32_t*)sem2.cpu;
  uint32_t n2 = push_acquire((uint32_t*)(cmd.cpu + 0x1000), sem2.gpu);
  struct nvgpu_gpfifo_entry held = nvc_gpfifo_entry(cmd.gpu + 0x1000, n2);
  must("kickoff (held)", kickoff(&held, 1, 1, &f, &busy, NULL));
  static struct nvgpu_gpfifo_entry batch[0x200];
  /* A one-word NOP entry (host method 0x08, NOP), the batch's filler. */
  ((uint32_t*)cmd.cpu)[0x800] = (1u << 29) | (1u << 16) | (0x008 >> 2);
  ((uint32_t*)cmd.cpu)[0x801] = 0;
  for (int i = 0; i < 0x200; i++) batch[i] = nvc_gpfifo_entry(cmd.gpu + 0x2000, 2);
  busy = 0;
  for (int round = 0; round < 6; round++)
    must("kickoff (batch)", kickoff(batch, 0x200, 0, &f, &busy, release_gpu));
  printf("overflow_busy=%d ", busy);
  if (busy == 0) all_held = 0;
  struct nvhost_wait_ex w = {f.id, f.value, 5000, 0};
  must("SYNCPT_WAITEX", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
  printf("overflow_done=1\n");

  /* A fault: a semaphore release to an unmapped address. The error notifier's event fires and
   * GET_ERROR_NOTIFICATION reports it (libnx's nvGpuChannelGetErrorNotification). */
  struct nvc_push p;
  memset(&p, 0, sizeof p);
  nvc_push_incr(&p, 0, 0x010, 4, 0x7u, 0x00000000u, 1u, 0x2u /* release */);
  memcpy(cmd.cpu + 0x3000, p.words, p.count * 4);
  struct nvgpu_gpfifo_entry fe = nvc_gpfifo_entry(cmd.gpu + 0x3000, p.count);
  must("kickoff (fault)", kickoff(&fe, 1, 0, &f, &busy, NULL));
  const int fired = wait_event(error_event, 5000) == 0;
  struct nvgpu_error_notification note;
  memset(&note, 0, sizeof note);
  must("GET_ERROR_NOTIFICATION", nvc_ioctl(&nv, ch, NVGPU_CH_GET_ERROR_NOTIFICATION, &note));
  check("fault_event", fired);
  printf("fault_status=%u\n", note.status);
  if (note.status == 0) all_held = 0;
  printf("libnx_guest=%s\n", all_held ? "ok" : "failed");
  return all_held ? 0 : 1;
}
