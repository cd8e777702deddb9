/* The display demo: an unmodified Linux program that draws a test pattern with the GPU in the
 * GPU's own surface layout and checks every pixel.
 *
 *   display_demo [--flips N]   (or --flips=N)
 *
 * 1. Open nvmap, ctrl, the address space and a channel through the Linux device nodes.
 * 2. Make a 1280x720 RGBA8 surface in block-linear layout (blocks 16 GOBs tall), the layout the
 *    display scans out on Tegra, and a pitch-linear buffer with eight colour bars.
 * 3. One submission: the DMA engine copies the bars into the surface (pitch to block-linear), and
 *    inline-to-memory writes a 64x8 checker strip into it at (608, 356); a fence after both.
 * 4. Show the surface on the built-in panel: take window A of /dev/nvdisp-disp0 and FLIP to the
 *    surface with the submission's fence as its pre-fence, so the display shows it only once the
 *    GPU has drawn it; wait for the flip's post-fence (it is on screen). With --flips N, flip it
 *    N - 1 times more, one vblank each.
 * 5. Check every pixel of the surface, reading the block-linear layout with the GOB formula of
 *    the Tegra X1 TRM written out below.
 * On the Switch an application draws (nvdrv) and the system's compositor flips (nvdrv:s); this one
 * program does both, so it runs as the test service, which holds every permission:
 *   nvsentry run --service=nvdrv:t --frames=DIR -- display_demo
 * writes the frame the display showed as DIR/disp0-NNNNNN.png. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "nvclient.h"

#define CLASS_3D 0xB197u
#define CLASS_I2M 0xA140u
#define CLASS_DMA 0xB0B5u
#define SUBCH_3D 0u
#define SUBCH_I2M 2u
#define SUBCH_DMA 4u

enum { kWidth = 1280, kHeight = 720, kBpp = 4, kBlockHeightLog2 = 4 };
enum { kStripX = 608, kStripY = 356, kStripW = 64, kStripH = 8 };

static struct nvc nv;

/* /dev/nvdisp-disp0, as L4T's tegra_dc_ext.h lays FLIP out in its 64-bit form (the 1224 bytes
 * the Switch's nvdisp FLIP takes begin with it). */
#define NVDISP_GET_WINDOW 0x40040201u
#define NVDISP_PUT_WINDOW 0x40040202u
#define NVDISP_FLIP 0xC4C80203u
#define DC_FMT_R8G8B8A8 13u
#define DC_FLIP_FLAG_BLOCKLINEAR (1u << 5)
struct dc_flip_window {
  int32_t index;
  uint32_t buff_id, blend, offset, offset_u, offset_v, stride, stride_uv, pixformat;
  uint32_t x, y, w, h; /* 20.12 fixed point */
  uint32_t out_x, out_y, out_w, out_h, z, swap_interval, pad0;
  int64_t timestamp_sec, timestamp_nsec;
  uint32_t pre_syncpt_id, pre_syncpt_val, buff_id_u, buff_id_v, flags;
  uint8_t global_alpha, block_height_log2, pad1[2];
  uint32_t extra[4];
};
struct dc_flip {
  struct dc_flip_window win[3];
  uint32_t post_syncpt_id, post_syncpt_val;
  uint8_t reserved[1224 - 3 * sizeof(struct dc_flip_window) - 8];
};
_Static_assert(sizeof(struct dc_flip_window) == 136, "tegra_dc_ext_flip_windowattr, LP64");
_Static_assert(sizeof(struct dc_flip) == 1224, "nvdisp FLIP");

#define CHECK(what, expr)                                                             \
  do {                                                                                \
    int rc_ = (expr);                                                                 \
    if (rc_ != 0) {                                                                   \
      fprintf(stderr, "display_demo: %s failed: %s\n", what, nvc_strerror(&nv, rc_)); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* An open that says what to do when it fails (outside the sandbox, or refused by its service). */
#define OPEN(path, fd)                                          \
  do {                                                          \
    int rc_ = nvc_open(&nv, path, fd);                          \
    if (rc_ != 0) {                                             \
      nvc_open_failed(&nv, "display_demo", argv[0], path, rc_); \
      exit(1);                                                  \
    }                                                           \
  } while (0)

struct buffer {
  uint8_t* cpu;
  uint32_t size, handle;
  uint64_t gpu;
};

/* A buffer in this process's memory, known to nvmap and mapped into the GPU's address space
 * (nvclient's usual sequence; examples/gpu_demo.c spells it out). */
static void make_buffer(struct buffer* b, uint32_t size, uint32_t nvmap, uint32_t as) {
  b->size = (size + 0xFFFu) & ~0xFFFu;
  b->cpu = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b->cpu == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  CHECK("map a buffer",
        nvc_map_memory(&nv, nvmap, as, b->cpu, b->size, 0x1000, &b->handle, &b->gpu));
}

static uint32_t hi(uint64_t va) { return (uint32_t)(va >> 32); }
static uint32_t lo(uint64_t va) { return (uint32_t)va; }

/* Block-linear addressing, as the Tegra X1 TRM gives it: a GOB is 64 bytes x 8 rows, byte x of
 * row y of a GOB at bits x5 y2 y1 x4 y0 x3 x2 x1 x0; blocks one GOB wide and 2^kBlockHeightLog2
 * GOBs tall, left to right, then down. */
static uint64_t bl_offset(uint32_t x_bytes, uint32_t y) {
  const uint32_t gobs_wide = (kWidth * kBpp + 63) / 64;
  const uint32_t block_rows = 8u << kBlockHeightLog2;
  const uint64_t block = (uint64_t)(y / block_rows) * gobs_wide + x_bytes / 64;
  const uint32_t gob_in_block = (y % block_rows) / 8;
  const uint32_t x = x_bytes % 64, yy = y % 8;
  const uint32_t in_gob = ((x >> 5) & 1) << 8 | ((yy >> 2) & 1) << 7 | ((yy >> 1) & 1) << 6 |
                          ((x >> 4) & 1) << 5 | (yy & 1) << 4 | (x & 15);
  return block * (512u << kBlockHeightLog2) + gob_in_block * 512u + in_gob;
}

static uint32_t bar_colour(uint32_t x) {
  static const uint32_t bars[8] = {0xFFFFFFFFu, 0xFF00FFFFu, 0xFFFFFF00u, 0xFF00FF00u,
                                   0xFFFF00FFu, 0xFF0000FFu, 0xFFFF0000u, 0xFF000000u};
  return bars[x * 8 / kWidth]; /* RGBA8 as a little-endian word: A B G R */
}

static uint32_t checker(uint32_t x, uint32_t y) {
  return ((x / 8 + y / 4) & 1) ? 0xFFFFFFFFu : 0xFF202020u;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  /* --flips N (or --flips=N): show the surface N times, one flip per vblank */
  const char* n = argc == 3 && strcmp(argv[1], "--flips") == 0        ? argv[2]
                  : argc == 2 && strncmp(argv[1], "--flips=", 8) == 0 ? argv[1] + 8
                  : argc == 1                                         ? "1"
                                                                      : NULL;
  char* end = NULL;
  const long v = n != NULL ? strtol(n, &end, 10) : 0;
  /* A number and nothing else: "3x" is a mistake, not 3. */
  if (n == NULL || n[0] < '0' || n[0] > '9' || *end != '\0' || v < 1 || v > 600) {
    fprintf(stderr, "usage: display_demo [--flips N (1 to 600)]\n");
    return 2;
  }
  const int flips = (int)v;
  CHECK("init", nvc_init(&nv, NVC_VIA_DIRECT, 0));
  uint32_t nvmap, ctrl, as, ch;
  OPEN("/dev/nvmap", &nvmap);
  OPEN("/dev/nvhost-ctrl", &ctrl);
  OPEN("/dev/nvhost-as-gpu", &as);
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .big_page_size = 0x20000};
  CHECK("ALLOC_AS_EX", nvc_ioctl(&nv, as, NVGPU_AS_ALLOC_AS_EX, &a));

  const uint32_t gobs_wide = (kWidth * kBpp + 63) / 64;
  const uint32_t blocks_high = (kHeight + (8u << kBlockHeightLog2) - 1) / (8u << kBlockHeightLog2);
  const uint32_t surface_size = blocks_high * gobs_wide * (512u << kBlockHeightLog2);
  struct buffer surface, bars, push;
  make_buffer(&surface, surface_size, nvmap, as);
  make_buffer(&bars, kWidth * kBpp * kHeight, nvmap, as);
  make_buffer(&push, 64 * 1024, nvmap, as);
  memset(surface.cpu, 0x55, surface.size);
  for (uint32_t y = 0; y < kHeight; y++)
    for (uint32_t x = 0; x < kWidth; x++)
      memcpy(bars.cpu + (y * kWidth + x) * kBpp, &(uint32_t){bar_colour(x)}, 4);

  const char* step = NULL;
  int rc = nvc_make_channel(&nv, nvmap, as, 0x800, &ch, &step);
  CHECK(step, rc);

  struct nvc_push pb = {0};
  nvc_push_incr(&pb, SUBCH_3D, 0x000, 1, CLASS_3D);
  nvc_push_incr(&pb, SUBCH_I2M, 0x000, 1, CLASS_I2M);
  nvc_push_incr(&pb, SUBCH_DMA, 0x000, 1, CLASS_DMA);
  /* The bars: pitch source, block-linear destination (SET_DST_BLOCK_SIZE: one GOB wide, 16 tall;
   * width in bytes, height, depth 1, layer 0, origin 0). */
  nvc_push_incr(&pb, SUBCH_DMA, 0x70C, 6, (uint32_t)kBlockHeightLog2 << 4, kWidth * kBpp,
                (uint32_t)kHeight, 1u, 0u, 0u);
  nvc_push_incr(&pb, SUBCH_DMA, 0x400, 8, hi(bars.gpu), lo(bars.gpu), hi(surface.gpu),
                lo(surface.gpu), kWidth * kBpp, 0u, kWidth * kBpp, (uint32_t)kHeight);
  /* LAUNCH_DMA: non-pipelined, flush, pitch source, block-linear destination, multi-line. */
  nvc_push_incr(&pb, SUBCH_DMA, 0x300, 1, 2u | (1u << 2) | (1u << 7) | (1u << 9));
  /* The checker strip by inline-to-memory into the block-linear surface. */
  nvc_push_incr(&pb, SUBCH_I2M, 0x180, 4, kStripW * kBpp, (uint32_t)kStripH, hi(surface.gpu),
                lo(surface.gpu));
  nvc_push_incr(&pb, SUBCH_I2M, 0x194, 6, (uint32_t)kBlockHeightLog2 << 4, kWidth * kBpp,
                (uint32_t)kHeight, 1u, 0u, kStripX * kBpp);
  nvc_push_incr(&pb, SUBCH_I2M, 0x1AC, 1, (uint32_t)kStripY);
  nvc_push_incr(&pb, SUBCH_I2M, 0x1B0, 1, 0u /* block-linear destination */);
  uint32_t strip[kStripW * kStripH];
  for (uint32_t y = 0; y < kStripH; y++)
    for (uint32_t x = 0; x < kStripW; x++) strip[y * kStripW + x] = checker(x, y);
  nvc_push_method(&pb, 3, SUBCH_I2M, 0x1B4, strip, kStripW * kStripH);
  memcpy(push.cpu, pb.words, pb.count * 4);

  struct {
    struct nvgpu_submit_gpfifo h;
    struct nvgpu_gpfifo_entry e[1];
  } sub;
  memset(&sub, 0, sizeof sub);
  sub.h.num_entries = 1;
  sub.h.flags = NVGPU_SUBMIT_FENCE_GET;
  sub.e[0] = nvc_gpfifo_entry(push.gpu, pb.count);
  CHECK("SUBMIT_GPFIFO",
        nvc_ioctl(&nv, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)sizeof sub << 16), &sub));

  /* Show it: the flip waits for the drawing's fence, the post-fence says it is on screen. */
  uint32_t disp;
  OPEN("/dev/nvdisp-disp0", &disp);
  uint32_t window = 0;
  CHECK("GET_WINDOW", nvc_ioctl(&nv, disp, NVDISP_GET_WINDOW, &window));
  static struct dc_flip flip;
  memset(&flip, 0, sizeof flip);
  flip.win[1].index = flip.win[2].index = -1;
  struct dc_flip_window* win = &flip.win[0];
  win->index = 0;
  win->buff_id = surface.handle;
  win->pixformat = DC_FMT_R8G8B8A8;
  win->w = (uint32_t)kWidth << 12;
  win->h = (uint32_t)kHeight << 12;
  win->out_w = kWidth;
  win->out_h = kHeight;
  win->flags = DC_FLIP_FLAG_BLOCKLINEAR;
  win->block_height_log2 = kBlockHeightLog2;
  win->pre_syncpt_id = sub.h.fence.id;
  win->pre_syncpt_val = sub.h.fence.value;
  CHECK("FLIP", nvc_ioctl(&nv, disp, NVDISP_FLIP, &flip));
  struct nvhost_wait_ex w = {flip.post_syncpt_id, flip.post_syncpt_val, 10000, 0};
  CHECK("SYNCPT_WAITEX (the flip's post-fence)",
        nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
  /* Again, flips - 1 times: each is shown at a vblank of its own, about 1/60 s apart. */
  const double t0 = now_ms();
  for (int i = 1; i < flips; i++) {
    win->pre_syncpt_id = 0xFFFFFFFFu; /* none: the surface is drawn */
    win->pre_syncpt_val = 0;
    CHECK("FLIP", nvc_ioctl(&nv, disp, NVDISP_FLIP, &flip));
    struct nvhost_wait_ex again = {flip.post_syncpt_id, flip.post_syncpt_val, 10000, 0};
    CHECK("SYNCPT_WAITEX", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &again));
  }
  if (flips > 1) printf("flips=%d after_first_ms=%.1f\n", flips, now_ms() - t0);
  /* On screen only after the drawing: so the drawing's fence is reached too. */
  struct nvhost_id_value drawn = {sub.h.fence.id, 0};
  CHECK("SYNCPT_READ", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ, &drawn));
  const int fence_first = (int32_t)(drawn.value - sub.h.fence.value) >= 0;
  CHECK("PUT_WINDOW", nvc_ioctl(&nv, disp, NVDISP_PUT_WINDOW, &window));

  uint32_t bad = 0;
  for (uint32_t y = 0; y < kHeight; y++) {
    for (uint32_t x = 0; x < kWidth; x++) {
      const int in_strip =
          x >= kStripX && x < kStripX + kStripW && y >= kStripY && y < kStripY + kStripH;
      const uint32_t want = in_strip ? checker(x - kStripX, y - kStripY) : bar_colour(x);
      uint32_t got;
      memcpy(&got, surface.cpu + bl_offset(x * kBpp, y), 4);
      bad += got != want;
    }
  }
  printf("surface: %ux%u RGBA8, block-linear (blocks %u GOBs tall), %u bytes\n", kWidth, kHeight,
         1u << kBlockHeightLog2, surface_size);
  printf("bars by the DMA engine, checker strip by inline-to-memory: %u of %u pixels wrong\n", bad,
         kWidth * kHeight);
  printf("flip: window A of disp0, pre-fence %u:%u, on screen at post-fence %u:%u: %s\n",
         sub.h.fence.id, sub.h.fence.value, flip.post_syncpt_id, flip.post_syncpt_val,
         fence_first ? "ok" : "SHOWN BEFORE IT WAS DRAWN");
  bad += !fence_first;
  printf("display_demo=%s mismatch=%u\n", bad ? "FAILED" : "ok", bad);
  free(pb.words);
  return bad ? 1 : 0;
}
