/* The demo guest: an unmodified Linux program that drives a Tegra X1 GPU the way a real nvdrv
 * client does, from the first open to a completed, fenced submission, and checks every byte.
 *
 *   gpu_demo [--direct] [--size BYTES]   (or --size=BYTES)
 *
 * 1. Connect to /dev/nvdrv (Initialize with a transfer memory), open nvmap, ctrl, ctrl-gpu, the
 *    address space and a channel (--direct: open the Linux nodes instead).
 * 2. Ask the GPU what it is (GET_CHARACTERISTICS).
 * 3. Allocate nvmap objects in this process's own memory, make an address space, map them.
 * 4. Make a channel: SET_NVMAP_FD, BIND_CHANNEL, ALLOC_GPFIFO_EX2, ALLOC_OBJ_CTX(3D), the error
 *    notifier.
 * 5. Submit one GPFIFO batch whose pushbuffers (a) copy a buffer with the DMA engine, (b) fill one
 *    with inline-to-memory data, (c) release a 3D report semaphore, and ask for (d) a fence: the
 *    channel's syncpoint incremented after the work.
 * 6. Wait for the fence with a syncpoint event (QueryEvent eventfd; --direct: SYNCPT_WAITEX).
 * 7. Check every byte and print what the GPU did. Exit status 0 only if everything matched. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvclient.h"

#define CLASS_3D 0xB197u
#define CLASS_I2M 0xA140u
#define CLASS_DMA 0xB0B5u
#define SUBCH_3D 0u
#define SUBCH_I2M 2u
#define SUBCH_DMA 4u

static struct nvc nv;

#define CHECK(what, expr)                                                         \
  do {                                                                            \
    int rc_ = (expr);                                                             \
    if (rc_ != 0) {                                                               \
      fprintf(stderr, "gpu_demo: %s failed: %s\n", what, nvc_strerror(&nv, rc_)); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

/* An open that says what to do when it fails (outside the sandbox, say). */
#define OPEN(path, fd)                                      \
  do {                                                      \
    int rc_ = nvc_open(&nv, path, fd);                      \
    if (rc_ != 0) {                                         \
      nvc_open_failed(&nv, "gpu_demo", argv[0], path, rc_); \
      exit(1);                                              \
    }                                                       \
  } while (0)

/* A buffer in this process's memory, known to nvmap and mapped into the GPU's address space. */
struct buffer {
  uint8_t* cpu;
  uint32_t size, handle;
  uint64_t gpu;
};

static void make_buffer(struct buffer* b, uint32_t size, uint32_t nvmap, uint32_t as) {
  b->size = size;
  b->cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b->cpu == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  struct nvmap_create cr = {size, 0};
  CHECK("NVMAP_IOC_CREATE", nvc_ioctl(&nv, nvmap, NVMAP_IOC_CREATE, &cr));
  b->handle = cr.handle;
  struct nvmap_alloc al = {cr.handle, 0,   1 /* read-write, cached */, 0x1000,
                           0,         {0}, (uint64_t)(uintptr_t)b->cpu};
  CHECK("NVMAP_IOC_ALLOC", nvc_ioctl(&nv, nvmap, NVMAP_IOC_ALLOC, &al));
  struct nvgpu_as_map_ex m = {4 /* cacheable */, 0, b->handle, 0, 0, 0, 0x1000};
  CHECK("NVGPU_AS_IOCTL_MAP_BUFFER_EX", nvc_ioctl(&nv, as, NVGPU_AS_MAP_BUFFER_EX, &m));
  b->gpu = m.offset;
}

static uint32_t hi(uint64_t va) { return (uint32_t)(va >> 32); }
static uint32_t lo(uint64_t va) { return (uint32_t)va; }

int main(int argc, char** argv) {
  int direct = 0;
  uint32_t copy_size = 1u << 20;
  for (int i = 1; i < argc; i++) {
    const char* size = NULL; /* --size BYTES or --size=BYTES */
    if (strcmp(argv[i], "--direct") == 0)
      direct = 1;
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      size = argv[++i];
    else if (strncmp(argv[i], "--size=", 7) == 0)
      size = argv[i] + 7;
    else {
      fprintf(stderr, "usage: gpu_demo [--direct] [--size BYTES]\n");
      return 2;
    }
    if (size == NULL) continue;
    /* A number and nothing else: "4096x" or "-1" is a mistake, not 4096 or a huge size. */
    char* end = NULL;
    errno = 0;
    const unsigned long v = strtoul(size, &end, 0);
    if (size[0] < '0' || size[0] > '9' || *end != '\0' || errno != 0 || v > (256u << 20)) {
      fprintf(stderr, "gpu_demo: --size: '%s' is not 1 to 256 MiB in bytes\n", size);
      fprintf(stderr, "usage: gpu_demo [--direct] [--size BYTES]\n");
      return 2;
    }
    copy_size = (uint32_t)v;
  }
  copy_size = (copy_size + 0xFFF) & ~0xFFFu;
  if (copy_size == 0 || copy_size > (256u << 20)) {
    fprintf(stderr,
            "gpu_demo: --size must be 1 to 256 MiB\nusage: gpu_demo [--direct] [--size BYTES]\n");
    return 2;
  }

  /* 1. Connect and open. */
  int rc = nvc_init(&nv, direct ? NVC_VIA_DIRECT : NVC_VIA_NVDRV, 0x800000);
  if (rc != 0 && !direct && nv.nvdrv < 0) {
    nvc_open_failed(&nv, "gpu_demo", argv[0], "/dev/nvdrv", rc);
    return 1;
  }
  CHECK("nvdrv Initialize", rc);
  uint32_t nvmap, ctrl, ctrl_gpu, as, ch;
  OPEN("/dev/nvmap", &nvmap);
  OPEN("/dev/nvhost-ctrl", &ctrl);
  OPEN("/dev/nvhost-ctrl-gpu", &ctrl_gpu);
  OPEN("/dev/nvhost-as-gpu", &as);
  OPEN("/dev/nvhost-gpu", &ch);

  /* 2. The GPU. */
  struct nvgpu_get_characteristics gc;
  memset(&gc, 0, sizeof gc);
  gc.buf_size = sizeof gc.gc;
  gc.buf_addr = 1;
  CHECK("GET_CHARACTERISTICS", nvc_ioctl(&nv, ctrl_gpu, NVGPU_GPU_GET_CHARACTERISTICS, &gc));
  char chip[9] = {0};
  memcpy(chip, &gc.gc.chipname, 8);
  printf("gpu: %s arch=0x%X impl=0x%X, classes 3d=0x%X dma=0x%X i2m=0x%X, big pages %u KiB\n", chip,
         gc.gc.arch, gc.gc.impl, gc.gc.threed_class, gc.gc.dma_copy_class,
         gc.gc.inline_to_memory_class, gc.gc.big_page_size >> 10);

  /* 3. Address space and memory. */
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .big_page_size = 0x20000};
  CHECK("ALLOC_AS_EX", nvc_ioctl(&nv, as, NVGPU_AS_ALLOC_AS_EX, &a));
  const uint32_t fill_size = 4096, report_size = 4096;
  struct buffer src, dst, fill, report, notifier, push;
  make_buffer(&src, copy_size, nvmap, as);
  make_buffer(&dst, copy_size, nvmap, as);
  make_buffer(&fill, fill_size, nvmap, as);
  make_buffer(&report, report_size, nvmap, as);
  make_buffer(&notifier, 4096, nvmap, as);
  make_buffer(&push, 64 * 1024, nvmap, as);
  for (uint32_t i = 0; i < copy_size; i++) src.cpu[i] = (uint8_t)(i * 7 + (i >> 12));
  memset(dst.cpu, 0xEE, copy_size);
  memset(fill.cpu, 0, fill_size);

  /* 4. The channel. */
  uint32_t nvmap_fd = nvmap;
  CHECK("SET_NVMAP_FD", nvc_ioctl(&nv, ch, NVGPU_CH_SET_NVMAP_FD, &nvmap_fd));
  struct nvgpu_as_bind_channel bind = {ch};
  CHECK("BIND_CHANNEL", nvc_ioctl(&nv, as, NVGPU_AS_BIND_CHANNEL, &bind));
  struct nvgpu_alloc_gpfifo_ex gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 0x800;
  gp.flags = 1;
  CHECK("ALLOC_GPFIFO_EX2", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_GPFIFO_EX2, &gp));
  struct nvgpu_alloc_obj_ctx obj = {CLASS_3D, 0, 0};
  CHECK("ALLOC_OBJ_CTX", nvc_ioctl(&nv, ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj));
  struct nvgpu_set_error_notifier en = {0, 4096, notifier.handle, 0};
  CHECK("SET_ERROR_NOTIFIER", nvc_ioctl(&nv, ch, NVGPU_CH_SET_ERROR_NOTIFIER, &en));

  /* 5. Pushbuffers: one segment per job, back to back in the push buffer. */
  struct nvc_push pb = {0};
  struct nvgpu_gpfifo_entry entries[3];
  uint32_t start = 0;
  /* (a) DMA copy, as 4 KiB lines (multi-line pitch copy). */
  nvc_push_incr(&pb, SUBCH_3D, 0x000, 1, CLASS_3D);
  nvc_push_incr(&pb, SUBCH_I2M, 0x000, 1, CLASS_I2M);
  nvc_push_incr(&pb, SUBCH_DMA, 0x000, 1, CLASS_DMA);
  nvc_push_incr(&pb, SUBCH_DMA, 0x400, 8, hi(src.gpu), lo(src.gpu), hi(dst.gpu), lo(dst.gpu), 4096u,
                4096u, 4096u, copy_size / 4096);
  /* LAUNCH_DMA: non-pipelined, flush, pitch source and destination, multi-line. */
  nvc_push_incr(&pb, SUBCH_DMA, 0x300, 1, 2u | (1u << 2) | (1u << 7) | (1u << 8) | (1u << 9));
  entries[0] = nvc_gpfifo_entry(push.gpu + start * 4, pb.count - start);
  start = pb.count;
  /* (b) inline-to-memory: fill_size bytes of a word pattern, carried in the pushbuffer. */
  nvc_push_incr(&pb, SUBCH_I2M, 0x180, 4, fill_size, 1u, hi(fill.gpu), lo(fill.gpu));
  nvc_push_incr(&pb, SUBCH_I2M, 0x1B0, 1, 1u /* pitch */);
  uint32_t* words = malloc(fill_size);
  for (uint32_t i = 0; i < fill_size / 4; i++) words[i] = 0xC0DE0000u | i;
  nvc_push_method(&pb, 3, SUBCH_I2M, 0x1B4, words, fill_size / 4);
  entries[1] = nvc_gpfifo_entry(push.gpu + start * 4, pb.count - start);
  start = pb.count;
  /* (c) 3D report semaphore: release the sequence as one word once the work before it is done. */
  const uint32_t sequence = 0x5EED0001u;
  nvc_push_incr(&pb, SUBCH_3D, 0x1B00, 4, hi(report.gpu), lo(report.gpu), sequence,
                0u /* release */ | (1u << 4) /* fence */ | (0xFu << 12) /* unit */ |
                    (1u << 28) /* one word */);
  entries[2] = nvc_gpfifo_entry(push.gpu + start * 4, pb.count - start);
  if (pb.count * 4 > push.size) {
    fprintf(stderr, "gpu_demo: pushbuffer too large\n");
    return 1;
  }
  memcpy(push.cpu, pb.words, pb.count * 4);

  /* (d) one submission with a fence: the channel's syncpoint goes up after the work. */
  struct {
    struct nvgpu_submit_gpfifo h;
    struct nvgpu_gpfifo_entry e[3];
  } sub;
  memset(&sub, 0, sizeof sub);
  sub.h.num_entries = 3;
  sub.h.flags = NVGPU_SUBMIT_FENCE_GET;
  memcpy(sub.e, entries, sizeof entries);
  CHECK("SUBMIT_GPFIFO",
        nvc_ioctl(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)sizeof sub << 16), &sub));
  const struct nvgpu_fence fence = sub.h.fence;

  /* 6. Wait for the fence. */
  const char* how;
  if (!direct) {
    const uint32_t slot = 1;
    CHECK("SYNCPT_ALLOC_EVENT",
          nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_ALLOC_EVENT, (uint32_t[]){slot}));
    int efd = -1;
    CHECK("QueryEvent", nvc_query_event(&nv, ctrl, 0x10000000u | slot, &efd));
    /* A non-zero timeout arms the event when the fence is not reached yet (Timeout answers). */
    struct nvhost_wait_ex w = {fence.id, fence.value, -1, slot};
    int rc = nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAIT_EVENT_EX, &w);
    if (rc == 0x5 /* Timeout: the event fires when the fence is reached */) {
      struct pollfd p = {efd, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) {
        fprintf(stderr, "gpu_demo: the fence event never fired\n");
        return 1;
      }
      how = "event";
    } else {
      CHECK("SYNCPT_WAIT_EVENT_EX", rc);
      how = "already reached";
    }
    CHECK("SYNCPT_FREE_EVENT",
          nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_FREE_EVENT, (uint32_t[]){slot}));
  } else {
    struct nvhost_wait_ex w = {fence.id, fence.value, 10000, 0};
    CHECK("SYNCPT_WAITEX", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
    how = "SYNCPT_WAITEX";
  }
  struct nvhost_id_value now = {fence.id, 0};
  CHECK("SYNCPT_READ", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ, &now));

  /* 7. Check every byte. */
  int bad = 0;
  uint32_t copy_bad = 0, fill_bad = 0;
  for (uint32_t i = 0; i < copy_size; i++) copy_bad += dst.cpu[i] != src.cpu[i];
  for (uint32_t i = 0; i < fill_size / 4; i++) fill_bad += ((uint32_t*)fill.cpu)[i] != words[i];
  uint32_t report_value;
  memcpy(&report_value, report.cpu, 4);
  struct nvgpu_error_notification note;
  memcpy(&note, notifier.cpu, sizeof note);
  printf("copy: %u bytes by the DMA engine: %s\n", copy_size, copy_bad ? "MISMATCH" : "ok");
  printf("fill: %u bytes by inline-to-memory: %s\n", fill_size, fill_bad ? "MISMATCH" : "ok");
  printf("report: semaphore 0x%08X, sequence 0x%08X: %s\n", report_value, sequence,
         report_value == sequence ? "ok" : "MISMATCH");
  const int reached = (int32_t)(now.value - fence.value) >= 0;
  printf("fence: syncpoint %u reached %u (fence %u, by %s): %s\n", fence.id, now.value, fence.value,
         how, reached ? "ok" : "NOT REACHED");
  printf("notifier: status %u\n", note.status);
  bad = copy_bad || fill_bad || report_value != sequence || !reached || note.status != 0;
  printf("demo=%s copy_mismatch=%u fill_mismatch=%u\n", bad ? "FAILED" : "ok", copy_bad, fill_bad);
  free(words);
  free(pb.words);
  return bad ? 1 : 0;
}
