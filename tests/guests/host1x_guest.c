/* A VIC client the usual way, under nvsentry: open /dev/nvhost-vic, SET_NVMAP_FD, GET_SYNCPOINT,
 * map a command buffer (nvmap object over this process's memory), SUBMIT a host1x stream that
 * increments the VIC syncpoint, and wait for the returned fence through /dev/nvhost-ctrl. Layouts
 * typed by hand from Switchbrew (nvhost channel and nvmap ioctls). Prints key=value lines; exits 0
 * when every step behaved. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvctrl.h"

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, "\n");                                 \
      exit(1);                                               \
    }                                                        \
  } while (0)

/* nvmap */
#define NVMAP_CREATE 0xC0080101u
#define NVMAP_ALLOC 0xC0200104u
struct nvmap_create {
  uint32_t size, handle;
};
struct nvmap_alloc {
  uint32_t handle, heapmask, flags, align;
  uint8_t kind, pad[7];
  uint64_t addr;
};

/* nvhost channel (magic 0: variable size, the size bits carry header plus arrays) */
#define CH_SET_NVMAP_FD 0x40044801u
#define CH_GET_SYNCPOINT 0xC0080002u
#define CH_SUBMIT(size) (0xC0000001u | ((uint32_t)(size) << 16))
#define CH_MAP_CMD_BUFFER(size) (0xC0000009u | ((uint32_t)(size) << 16))
struct id_value {
  uint32_t param, value;
};
struct map_cmd_buffer {
  uint32_t num_handles, reserved;
  uint8_t is_compr, pad[3];
  struct {
    uint32_t handle, phys_addr;
  } handles[1];
};
struct submit {
  uint32_t num_cmdbufs, num_relocs, num_syncpt_incrs, num_fences;
  struct {
    uint32_t mem, offset, words;
  } cmdbuf;
  struct {
    uint32_t syncpt_id, syncpt_incrs, reserved[3];
  } incr;
  uint32_t fence;
};

/* host1x opcodes */
#define SETCLASS(cls) ((uint32_t)(cls) << 6)
#define IMM(off, v) ((4u << 28) | ((uint32_t)(off) << 16) | (v))

/* A VIC channel stopped `n` times over (open, SET_NVMAP_FD, MAP_CMD_BUFFER, a submit past the
 * object, its fence, close): what a guest does to make the sentry log without end. */
static int stops(int nvmap, int ctrl, uint32_t handle, int n) {
  for (int i = 0; i < n; i++) {
    int vic = open("/dev/nvhost-vic", O_RDWR | O_CLOEXEC);
    CHECK(vic >= 0, "open: %s", strerror(errno));
    uint32_t fd = (uint32_t)nvmap;
    CHECK(ioctl(vic, CH_SET_NVMAP_FD, &fd) == 0, "SET_NVMAP_FD: %s", strerror(errno));
    struct id_value sp = {0, 0};
    CHECK(ioctl(vic, CH_GET_SYNCPOINT, &sp) == 0, "GET_SYNCPOINT: %s", strerror(errno));
    struct map_cmd_buffer m = {1, 0, 0, {0}, {{handle, 0}}};
    CHECK(ioctl(vic, CH_MAP_CMD_BUFFER(sizeof(m)), &m) == 0, "MAP: %s", strerror(errno));
    struct submit s = {1, 0, 1, 1, {handle, 0xFFC, 2}, {sp.value, 1, {0}}, 0};
    CHECK(ioctl(vic, CH_SUBMIT(sizeof(s)), &s) == 0, "SUBMIT: %s", strerror(errno));
    struct nv_wait w = {sp.value, s.fence, 5000};
    CHECK(ioctl(ctrl, NV_SYNCPT_WAIT, &w) == 0, "SYNCPT_WAIT: %s", strerror(errno));
    close(vic);
  }
  printf("stopped=%d\n", n);
  return 0;
}

/* An NVJPG job that writes two of NVJPG's own methods through METHOD0/METHOD1 (THI words
 * 0x10/0x11; byte offsets typed by hand from cle7d0.h: SET_BITSTREAM 0x710, EXECUTE 0x300), for
 * the trace to name. */
static int nvjpg(int nvmap, int ctrl, uint32_t handle, uint32_t* buf) {
  int ch = open("/dev/nvhost-nvjpg", O_RDWR | O_CLOEXEC);
  CHECK(ch >= 0, "open nvjpg: %s", strerror(errno));
  uint32_t fd = (uint32_t)nvmap;
  CHECK(ioctl(ch, CH_SET_NVMAP_FD, &fd) == 0, "SET_NVMAP_FD: %s", strerror(errno));
  struct id_value sp = {0, 0};
  CHECK(ioctl(ch, CH_GET_SYNCPOINT, &sp) == 0, "GET_SYNCPOINT: %s", strerror(errno));
  struct map_cmd_buffer m = {1, 0, 0, {0}, {{handle, 0}}};
  CHECK(ioctl(ch, CH_MAP_CMD_BUFFER(sizeof(m)), &m) == 0, "MAP: %s", strerror(errno));
  buf[0] = SETCLASS(0xC0);
  buf[1] = IMM(0x10, 0x710 >> 2);
  buf[2] = IMM(0x11, 0);
  buf[3] = IMM(0x10, 0x300 >> 2);
  buf[4] = IMM(0x11, 0);
  struct submit s = {1, 0, 1, 1, {handle, 0, 5}, {sp.value, 1, {0}}, 0};
  CHECK(ioctl(ch, CH_SUBMIT(sizeof(s)), &s) == 0, "SUBMIT: %s", strerror(errno));
  struct nv_wait w = {sp.value, s.fence, 5000};
  CHECK(ioctl(ctrl, NV_SYNCPT_WAIT, &w) == 0, "SYNCPT_WAIT: %s", strerror(errno));
  printf("nvjpg_syncpoint=%u\n", sp.value);
  close(ch);
  return 0;
}

int main(int argc, char** argv) {
  if (!(argc == 1 || (argc == 2 && strcmp(argv[1], "nvjpg") == 0) ||
        (argc == 3 && strcmp(argv[1], "stops") == 0))) {
    fprintf(stderr, "host1x_guest: bad arguments\nusage: host1x_guest [nvjpg | stops N]\n");
    return 2;
  }
  int nvmap = open("/dev/nvmap", O_RDWR | O_CLOEXEC);
  int ctrl = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  int vic = open("/dev/nvhost-vic", O_RDWR | O_CLOEXEC);
  CHECK(nvmap >= 0 && ctrl >= 0 && vic >= 0, "open: %s", strerror(errno));

  uint32_t fd = (uint32_t)nvmap;
  CHECK(ioctl(vic, CH_SET_NVMAP_FD, &fd) == 0, "SET_NVMAP_FD: %s", strerror(errno));
  struct id_value sp = {0, 0};
  CHECK(ioctl(vic, CH_GET_SYNCPOINT, &sp) == 0, "GET_SYNCPOINT: %s", strerror(errno));
  printf("syncpoint=%u\n", sp.value);

  uint32_t* buf = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(buf != MAP_FAILED, "mmap");
  struct nvmap_create cr = {0x1000, 0};
  CHECK(ioctl(nvmap, NVMAP_CREATE, &cr) == 0, "CREATE: %s", strerror(errno));
  struct nvmap_alloc al = {cr.handle, 1, 1, 0x1000, 0, {0}, (uint64_t)(uintptr_t)buf};
  CHECK(ioctl(nvmap, NVMAP_ALLOC, &al) == 0, "ALLOC: %s", strerror(errno));

  struct map_cmd_buffer m = {1, 0, 0, {0}, {{cr.handle, 0}}};
  CHECK(ioctl(vic, CH_MAP_CMD_BUFFER(sizeof(m)), &m) == 0, "MAP_CMD_BUFFER: %s", strerror(errno));
  CHECK(m.handles[0].phys_addr != 0, "no device address");
  printf("mapped=0x%x\n", m.handles[0].phys_addr);
  if (argc == 3 && strcmp(argv[1], "stops") == 0) {
    close(vic); /* gives its syncpoint back for the loop's channels */
    return stops(nvmap, ctrl, cr.handle, atoi(argv[2]));
  }
  if (argc == 2 && strcmp(argv[1], "nvjpg") == 0) return nvjpg(nvmap, ctrl, cr.handle, buf);

  /* The stream: host1x class, INCR_SYNCPT (condition OP_DONE) of the VIC syncpoint; then one VIC
   * method, counted by the simulator. */
  buf[0] = SETCLASS(1);
  buf[1] = IMM(0, (1u << 8) | sp.value);
  buf[2] = SETCLASS(0x5D);
  buf[3] = IMM(0x40, 0);
  struct nv_id_value before = {sp.value, 0};
  CHECK(ioctl(ctrl, NV_SYNCPT_READ, &before) == 0, "SYNCPT_READ: %s", strerror(errno));

  struct submit s = {1, 0, 1, 1, {cr.handle, 0, 4}, {sp.value, 1, {0}}, 0};
  CHECK(ioctl(vic, CH_SUBMIT(sizeof(s)), &s) == 0, "SUBMIT: %s", strerror(errno));
  printf("fence=%u\n", s.fence - before.value);

  struct nv_wait w = {sp.value, s.fence, 5000};
  CHECK(ioctl(ctrl, NV_SYNCPT_WAIT, &w) == 0, "SYNCPT_WAIT: %s", strerror(errno));
  struct nv_id_value after = {sp.value, 0};
  CHECK(ioctl(ctrl, NV_SYNCPT_READ, &after) == 0, "SYNCPT_READ: %s", strerror(errno));
  printf("moved=%u\n", after.value - before.value);

  /* A command buffer past its object stops the channel: later submits answer Timeout. */
  s.cmdbuf.offset = 0xFFC;
  s.cmdbuf.words = 2;
  CHECK(ioctl(vic, CH_SUBMIT(sizeof(s)), &s) == 0, "SUBMIT past the object: %s", strerror(errno));
  w.thresh = s.fence;
  CHECK(ioctl(ctrl, NV_SYNCPT_WAIT, &w) == 0, "fence of the failed submit: %s", strerror(errno));
  int rc = ioctl(vic, CH_SUBMIT(sizeof(s)), &s);
  printf("after_failure=%d\n", rc == 0 ? 0 : errno);
  return 0;
}
