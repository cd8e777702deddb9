/* Guest for the catalogue/service tests. Modes:
 *   opens PATH...   open each path, print "PATH=0" or "PATH=<errno>"
 *   service         drive /dev/nvdrv through its commands; print "key=value" results
 *   variable        variable-length ioctls on /dev/nvhost-gpu checked against their code's size,
 *                   and the Ioctl2/Ioctl3 buffers through /dev/nvdrv
 *   trace           a short, fixed conversation for the --trace tests
 *   sweep PATH CODE... [PATH CODE...]  open PATH, call each code (hex) on a zeroed buffer of the
 *                   code's size, print "CODE=errno" (the open's errno as "open=N"); a later PATH
 *                   closes the device and opens the next
 *   policy ENTRIES INIT_SIZE [more]  a fixed set of calls the policy tests judge (see policy());
 *                   "done=1" at the end (absent when the guest was killed)
 *   hold N PATH     open PATH N times, keeping every fd; print "held=K first_error=E"
 *   lastclose PATH  open PATH, print "fd=N", close it as the very last action and exit at once
 * Layouts are typed here from the guest ABI document, independently of the sandbox's sources. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvdrv_cmds.h"

#define IOC(dir, magic, nr, size) \
  (((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((magic) << 8) | (nr))
#define RW 3u

struct nvdrv_status {
  uint32_t free_size, allocatable, min_free, min_allocatable;
  uint8_t reserved[16];
  uint32_t error, pad;
};
struct nvdrv_aruid {
  uint64_t aruid;
  uint32_t error, reserved;
};

#define NVDRV_GET_STATUS IOC(RW, 'n', 6, sizeof(struct nvdrv_status))
#define NVDRV_SET_ARUID_WITHOUT_CHECK IOC(RW, 'n', 7, sizeof(struct nvdrv_aruid))
#define NVDRV_SET_ARUID IOC(RW, 'n', 8, sizeof(struct nvdrv_aruid))
#define NVDRV_DUMP_STATUS IOC(0, 'n', 9, 0)
#define NVDRV_SET_MARGIN IOC(RW, 'n', 13, sizeof(struct nvdrv_aruid))

/* Device ioctls (Switchbrew). */
#define SYNCPT_READ 0xC0080014u
#define SYNCPT_INCR 0x40040015u
#define GET_CHARACTERISTICS 0xC0B04705u
#define SUBMIT_GPFIFO_BASE 0xC0004808u
#define SUBMIT_GPFIFO2 0xC018481Bu
#define GET_TPC_MASKS 0xC0184706u
#define NVMAP_CREATE 0xC0080101u
#define NVMAP_CLAIM 0x00000102u
#define NVMAP_GET_ID 0xC008010Eu
#define NVMAP_FREE 0xC0180105u
#define FREE_OBJ_CTX 0x4008480Au
#define SYNCPT_ALLOC_EVENT 0xC004001Fu
#define ALLOC_GPFIFO 0x40084805u
#define CHANNEL_DISABLE 0x0000480Fu

static int fail(const char* what) {
  fprintf(stderr, "FAILED: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int opens(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    int fd = open(argv[i], O_RDWR | O_CLOEXEC);
    printf("%s=%d\n", argv[i], fd >= 0 ? 0 : errno);
    if (fd >= 0) close(fd);
  }
  return 0;
}

static uint32_t nv_open(int nvdrv, const char* path) {
  struct nvdrv_open o;
  memset(&o, 0, sizeof o);
  strncpy(o.path, path, sizeof o.path - 1);
  if (ioctl(nvdrv, NVDRV_OPEN, &o) != 0) fail("NVDRV_OPEN");
  return o.error ? 0x80000000u | o.error : o.fd;
}

/* Runs a device ioctl through the Ioctl command with one buffer used for both directions. */
static uint32_t nv_ioctl(int nvdrv, uint32_t fd, uint32_t code, void* arg) {
  uint32_t size = (code >> 16) & 0x3FFF;
  struct nvdrv_ioctl c = {fd, code, (uintptr_t)arg, size, (uintptr_t)arg, size, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_IOCTL, &c) != 0) fail("NVDRV_IOCTL");
  return c.error;
}

static int service(void) {
  int nvdrv = open("/dev/nvdrv", O_RDWR | O_CLOEXEC);
  if (nvdrv < 0) fail("open /dev/nvdrv");
  printf("open_before_init=0x%x\n", nv_open(nvdrv, "/dev/nvhost-ctrl") & 0x7FFFFFFF);

  struct nvdrv_status st = {0};
  if (ioctl(nvdrv, NVDRV_GET_STATUS, &st) != 0) fail("GET_STATUS");
  printf("status_before_init=0x%x\n", st.error);

  struct nvdrv_init in = {0, 0x3000, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_INITIALIZE, &in) != 0) fail("INITIALIZE");
  printf("init=0x%x\n", in.error);
  struct nvdrv_init again = {0, 0x3000, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_INITIALIZE, &again) != 0) fail("INITIALIZE again");
  printf("init_again=0x%x\n", again.error);

  uint32_t ctrl = nv_open(nvdrv, "/dev/nvhost-ctrl");
  printf("ctrl_fd=%u\n", ctrl);
  printf("open_unknown=0x%x\n", nv_open(nvdrv, "/dev/nvhost-nonesuch") & 0x7FFFFFFF);
  printf("open_nvdrv=0x%x\n", nv_open(nvdrv, "/dev/nvdrv") & 0x7FFFFFFF);

  memset(&st, 0, sizeof st);
  if (ioctl(nvdrv, NVDRV_GET_STATUS, &st) != 0) fail("GET_STATUS");
  printf("status=0x%x free=0x%x allocatable=0x%x min_free=0x%x\n", st.error, st.free_size,
         st.allocatable, st.min_free);

  /* A syncpoint through the service: increment 30 twice, read it back. */
  uint32_t id = 30;
  printf("incr=0x%x\n", nv_ioctl(nvdrv, ctrl, SYNCPT_INCR, &id));
  printf("incr=0x%x\n", nv_ioctl(nvdrv, ctrl, SYNCPT_INCR, &id));
  uint32_t iv[2] = {30, 0xdeadbeef};
  uint32_t read_err = nv_ioctl(nvdrv, ctrl, SYNCPT_READ, iv);
  printf("read=0x%x value=%u\n", read_err, iv[1]);
  uint32_t bad[2] = {999, 0xdeadbeef};
  uint32_t bad_err = nv_ioctl(nvdrv, ctrl, SYNCPT_READ, bad);
  printf("read_bad_id=0x%x untouched=%d\n", bad_err, bad[1] == 0xdeadbeef);
  uint64_t scratch[4] = {0};
  printf("unknown_code=0x%x\n", nv_ioctl(nvdrv, ctrl, 0xC0080099, scratch));
  printf("bad_fd=0x%x\n", nv_ioctl(nvdrv, 77, SYNCPT_READ, iv));

  /* Separate in and out buffers: the output lands in `out`, `in` is not written. */
  uint32_t in_buf[2] = {30, 0x11111111}, out_buf[2] = {0x22222222, 0x22222222};
  struct nvdrv_ioctl split = {
      ctrl, SYNCPT_READ, (uintptr_t)in_buf, 8, (uintptr_t)out_buf, 8, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_IOCTL, &split) != 0) fail("NVDRV_IOCTL split");
  printf("split=0x%x out_id=%u out_value=%u in_value=0x%x\n", split.error, out_buf[0], out_buf[1],
         in_buf[1]);
  /* An input buffer shorter than the code's size. */
  struct nvdrv_ioctl shorty = {
      ctrl, SYNCPT_READ, (uintptr_t)in_buf, 4, (uintptr_t)out_buf, 8, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_IOCTL, &shorty) != 0) fail("NVDRV_IOCTL short");
  printf("short_in=0x%x\n", shorty.error);
  /* An unreadable input buffer is EFAULT for the command itself. */
  struct nvdrv_ioctl wild = {ctrl, SYNCPT_READ, 0x10, 8, (uintptr_t)out_buf, 8, 0xFFFFFFFF, 0};
  printf("wild_in_errno=%d\n", ioctl(nvdrv, NVDRV_IOCTL, &wild) == 0 ? 0 : errno);

  /* Ioctl2/Ioctl3 on ioctls that do not take the extra buffer. */
  struct nvdrv_ioctl2 i2 = {ctrl,          SYNCPT_READ, (uintptr_t)iv, 8, (uintptr_t)scratch, 8,
                            (uintptr_t)iv, 8,           0xFFFFFFFF,    0};
  if (ioctl(nvdrv, NVDRV_IOCTL2, &i2) != 0) fail("NVDRV_IOCTL2");
  printf("ioctl2_plain=0x%x\n", i2.error);
  struct nvdrv_ioctl3 i3 = {
      ctrl, SYNCPT_READ, (uintptr_t)iv, 8, (uintptr_t)iv, 8, (uintptr_t)scratch, 8, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_IOCTL3, &i3) != 0) fail("NVDRV_IOCTL3");
  printf("ioctl3_plain=0x%x\n", i3.error);

  /* Events: a syncpoint event of nvhost-ctrl is an eventfd in this process, once its slot is
   * allocated. */
  uint32_t slot = 5;
  printf("alloc_event=0x%x\n", nv_ioctl(nvdrv, ctrl, SYNCPT_ALLOC_EVENT, &slot));
  struct nvdrv_query q = {ctrl, 0x10000000u | 5, 1, -1, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_QUERY_EVENT, &q) != 0) fail("QUERY_EVENT");
  int cloexec = q.event_fd >= 0 ? (fcntl(q.event_fd, F_GETFD) & FD_CLOEXEC) != 0 : -1;
  char link[64], target[128] = "";
  snprintf(link, sizeof link, "/proc/self/fd/%d", q.event_fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n > 0) target[n] = 0;
  uint64_t v;
  int flags = fcntl(q.event_fd, F_GETFL);
  fcntl(q.event_fd, F_SETFL, flags | O_NONBLOCK);
  int rd = (int)read(q.event_fd, &v, sizeof v);
  printf("query=0x%x event_is_eventfd=%d cloexec=%d unsignalled=%d\n", q.error,
         strstr(target, "eventfd") != NULL, cloexec, rd < 0 && errno == EAGAIN);
  struct nvdrv_query qbad = {ctrl, 64, 0, -1, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_QUERY_EVENT, &qbad) != 0) fail("QUERY_EVENT bad");
  printf("query_bad_id=0x%x event_fd=%d\n", qbad.error, qbad.event_fd);

  struct nvdrv_aruid a = {0x1234, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_SET_ARUID_WITHOUT_CHECK, &a) != 0) fail("SET_ARUID_WITHOUT_CHECK");
  printf("aruid_unchecked=0x%x\n", a.error);
  struct nvdrv_aruid b = {0x1234, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_SET_ARUID, &b) != 0) fail("SET_ARUID");
  printf("aruid=0x%x\n", b.error);
  struct nvdrv_aruid m = {1, 0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_SET_MARGIN, &m) != 0) fail("SET_MARGIN");
  printf("margin=0x%x\n", m.error);
  printf("dump=%d\n", ioctl(nvdrv, NVDRV_DUMP_STATUS, 0) == 0 ? 0 : errno);

  /* Budget: 0x3000 bytes at one page per fd: ctrl holds one, so two more fit, the next does not. */
  uint32_t f2 = nv_open(nvdrv, "/dev/nvhost-ctrl"), f3 = nv_open(nvdrv, "/dev/nvmap");
  uint32_t f4 = nv_open(nvdrv, "/dev/nvhost-ctrl");
  printf("budget_opens=%d,%d over_budget=0x%x\n", !(f2 >> 31), !(f3 >> 31), f4 & 0x7FFFFFFF);
  struct nvdrv_close cl = {f3, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_CLOSE, &cl) != 0) fail("CLOSE");
  struct nvdrv_close cl2 = {f3, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_CLOSE, &cl2) != 0) fail("CLOSE again");
  printf("close=0x%x close_again=0x%x after_close_open=%d\n", cl.error, cl2.error,
         !(nv_open(nvdrv, "/dev/nvmap") >> 31));
  memset(&st, 0, sizeof st);
  ioctl(nvdrv, NVDRV_GET_STATUS, &st);
  printf("final_free=0x%x final_min_free=0x%x\n", st.free_size, st.min_free);
  printf("wrong_size_errno=%d\n", ioctl(nvdrv, IOC(RW, 'n', 1, 40), &split) == 0 ? 0 : errno);
  close(nvdrv);
  return 0;
}

/* SUBMIT_GPFIFO with n entries: 24-byte header + 8 bytes per entry, as real clients encode it. */
static int variable(void) {
  int gpu = open("/dev/nvhost-gpu", O_RDWR | O_CLOEXEC);
  if (gpu < 0) fail("open /dev/nvhost-gpu");
  /* A GPFIFO, so that a submit that passes validation succeeds; the channel is disabled so that
   * the zeroed entries (zero-length: a pusher error) never run and fail the channel. */
  uint32_t ring[2] = {32, 0};
  int alloc = ioctl(gpu, ALLOC_GPFIFO, ring) == 0 ? 0 : errno;
  int disable = ioctl(gpu, CHANNEL_DISABLE, 0) == 0 ? 0 : errno;
  printf("alloc_gpfifo=%d disable=%d\n", alloc, disable);
  struct {
    uint64_t gpfifo;
    uint32_t num_entries, flags;
    uint32_t fence_id, fence_value;
    uint64_t entries[4];
  } s;
  memset(&s, 0, sizeof s);
  s.num_entries = 4;
  int ok = ioctl(gpu, SUBMIT_GPFIFO_BASE | ((24 + 8 * 4) << 16), &s) == 0 ? 0 : errno;
  s.num_entries = 5; /* one more than the size carries */
  int more = ioctl(gpu, SUBMIT_GPFIFO_BASE | ((24 + 8 * 4) << 16), &s) == 0 ? 0 : errno;
  s.num_entries = 3; /* one fewer */
  int fewer = ioctl(gpu, SUBMIT_GPFIFO_BASE | ((24 + 8 * 4) << 16), &s) == 0 ? 0 : errno;
  s.num_entries = 0x40000000u; /* count * 8 overflows 32 bits */
  int huge = ioctl(gpu, SUBMIT_GPFIFO_BASE | ((24 + 8 * 4) << 16), &s) == 0 ? 0 : errno;
  int shorthdr = ioctl(gpu, SUBMIT_GPFIFO_BASE | (16 << 16), &s) == 0 ? 0 : errno;
  /* SUBMIT_GPFIFO2 carries its entries in Ioctl2's second buffer: a plain ioctl with entries is
   * a count mismatch; with none it passes validation. */
  s.num_entries = 2;
  int plain2 = ioctl(gpu, SUBMIT_GPFIFO2, &s) == 0 ? 0 : errno;
  s.num_entries = 0;
  int plain2_empty = ioctl(gpu, SUBMIT_GPFIFO2, &s) == 0 ? 0 : errno;
  printf("matching=%d more=%d fewer=%d huge=%d short_header=%d gpfifo2_plain=%d gpfifo2_empty=%d\n",
         ok, more, fewer, huge, shorthdr, plain2, plain2_empty);
  /* Fixed answers of Switchbrew ("Returns NotSupported"). */
  uint64_t obj = 0;
  int free_obj = ioctl(gpu, FREE_OBJ_CTX, &obj) == 0 ? 0 : errno;
  int nvmap = open("/dev/nvmap", O_RDWR | O_CLOEXEC);
  if (nvmap < 0) fail("open /dev/nvmap");
  int claim = ioctl(nvmap, NVMAP_CLAIM, 0) == 0 ? 0 : errno;
  printf("free_obj_ctx=%d claim=%d\n", free_obj, claim);
  close(nvmap);
  close(gpu);

  /* Through /dev/nvdrv: SUBMIT_GPFIFO2's entries in Ioctl2's second buffer, and an Ioctl3 read. */
  int nvdrv = open("/dev/nvdrv", O_RDWR | O_CLOEXEC);
  if (nvdrv < 0) fail("open /dev/nvdrv");
  struct nvdrv_init in = {0, 0x10000, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_INITIALIZE, &in) != 0) fail("INITIALIZE");
  uint32_t ch = nv_open(nvdrv, "/dev/nvhost-gpu");
  uint32_t ring2[2] = {32, 0};
  uint32_t nv_alloc = nv_ioctl(nvdrv, ch, ALLOC_GPFIFO, ring2);
  uint32_t nv_disable = nv_ioctl(nvdrv, ch, CHANNEL_DISABLE, NULL);
  printf("nvdrv_alloc_gpfifo=0x%x nvdrv_disable=0x%x\n", nv_alloc, nv_disable);
  uint64_t entries[3] = {0};
  memset(&s, 0, sizeof s);
  s.num_entries = 3;
  struct nvdrv_ioctl2 g2 = {
      ch, SUBMIT_GPFIFO2, (uintptr_t)&s, 24, (uintptr_t)entries, 24, (uintptr_t)&s, 24, 0xFFFFFFFF,
      0};
  if (ioctl(nvdrv, NVDRV_IOCTL2, &g2) != 0) fail("IOCTL2");
  struct nvdrv_ioctl2 g2bad = g2;
  g2bad.in2_size = 16; /* two entries' worth for a count of three */
  g2bad.error = 0xFFFFFFFF;
  if (ioctl(nvdrv, NVDRV_IOCTL2, &g2bad) != 0) fail("IOCTL2 bad");
  uint32_t cg = nv_open(nvdrv, "/dev/nvhost-ctrl-gpu");
  uint64_t tpc[3] = {0};
  tpc[0] = sizeof(uint32_t); /* mask_buf_size: ignored, but must not be zero (Switchbrew) */
  uint32_t masks[4] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
  struct nvdrv_ioctl3 t3 = {cg, GET_TPC_MASKS,    (uintptr_t)tpc, 24,         (uintptr_t)tpc,
                            24, (uintptr_t)masks, sizeof masks,   0xFFFFFFFF, 0};
  if (ioctl(nvdrv, NVDRV_IOCTL3, &t3) != 0) fail("IOCTL3");
  printf("gpfifo2_ioctl2=0x%x gpfifo2_ioctl2_short=0x%x tpc_masks_ioctl3=0x%x tpc_mask_gpc0=0x%x\n",
         g2.error, g2bad.error, t3.error, masks[0]);
  close(nvdrv);
  return 0;
}

static int sweep(int n, char** args) {
  static uint64_t buf[0x4000 / 8];
  int fd = -1;
  for (int i = 0; i < n; ++i) {
    if (args[i][0] == '/') { /* the next device */
      if (fd >= 0) close(fd);
      fd = open(args[i], O_RDWR | O_CLOEXEC);
      printf("open=%d\n", fd >= 0 ? 0 : errno);
      continue;
    }
    if (fd < 0) continue;
    uint32_t code = (uint32_t)strtoul(args[i], NULL, 16);
    memset(buf, 0, sizeof buf);
    int r = ioctl(fd, code, buf);
    printf("%s=%d\n", args[i], r == 0 ? 0 : errno);
  }
  if (fd >= 0) close(fd);
  return 0;
}

/* A short conversation whose trace the tests read: every result is printed for comparison. */
static int trace(void) {
  int ctrl = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  if (ctrl < 0) fail("open /dev/nvhost-ctrl");
  uint32_t id = 7;
  if (ioctl(ctrl, SYNCPT_INCR, &id) != 0) fail("SYNCPT_INCR");
  uint32_t iv[2] = {7, 0};
  if (ioctl(ctrl, SYNCPT_READ, iv) != 0) fail("SYNCPT_READ");
  uint32_t bad[2] = {999, 0};
  int bad_errno = ioctl(ctrl, SYNCPT_READ, bad) == 0 ? 0 : errno;
  close(ctrl);
  int gpu = open("/dev/nvhost-gpu", O_RDWR | O_CLOEXEC);
  if (gpu < 0) fail("open /dev/nvhost-gpu");
  struct {
    uint64_t gpfifo;
    uint32_t num_entries, flags;
    uint32_t fence_id, fence_value;
    uint32_t e[4];
  } s;
  memset(&s, 0, sizeof s);
  s.num_entries = 2;
  s.e[0] = 0x1000;
  s.e[1] = 0x80000400;
  s.e[2] = 0x2000;
  s.e[3] = 0x80000800;
  int submit_errno = ioctl(gpu, SUBMIT_GPFIFO_BASE | (40u << 16), &s) == 0 ? 0 : errno;
  close(gpu);
  int nvdrv = open("/dev/nvdrv", O_RDWR | O_CLOEXEC);
  if (nvdrv < 0) fail("open /dev/nvdrv");
  struct nvdrv_init in = {0, 0x10000, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_INITIALIZE, &in) != 0) fail("INITIALIZE");
  uint32_t nvmap = nv_open(nvdrv, "/dev/nvmap");
  uint32_t create[2] = {0x1000, 0};
  uint32_t create_err = nv_ioctl(nvdrv, nvmap, NVMAP_CREATE, create);
  struct nvdrv_close cl = {nvmap, 0xFFFFFFFF};
  if (ioctl(nvdrv, NVDRV_CLOSE, &cl) != 0) fail("CLOSE");
  close(nvdrv);
  printf("value=%u bad_errno=%d submit_errno=%d nvmap_fd=%u create=0x%x handle=0x%x\n", iv[1],
         bad_errno, submit_errno, nvmap, create_err, create[1]);
  return 0;
}

/* Calls a policy can judge, each result printed as it happens (a killed guest prints no more). */
#define SYNCPT_READ_MAX 0xC008001Au
#define GET_CONFIG 0xC183001Bu
#define NVMAP_FROM_ID 0xC0080103u
#define NVMAP_EXPORT_FOR_ARUID 0x40100112u

static int err_of(int r) { return r == 0 ? 0 : errno; }

static int policy(int entries, uint32_t init_size, int more) {
  int ctrl = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  printf("ctrl_open=%d\n", ctrl >= 0 ? 0 : errno);
  if (ctrl >= 0) {
    uint32_t id = 5;
    printf("incr=%d\n", err_of(ioctl(ctrl, SYNCPT_INCR, &id)));
    uint32_t iv[2] = {5, 0xdeadbeef};
    int r = err_of(ioctl(ctrl, SYNCPT_READ, iv));
    printf("read=%d value=%u\n", r, iv[1]);
    printf("get_config=%d\n", err_of(ioctl(ctrl, GET_CONFIG, NULL)));
    if (more) {
      uint32_t mv[2] = {5, 0};
      printf("read_max=%d\n", err_of(ioctl(ctrl, SYNCPT_READ_MAX, mv)));
    }
  }
  int nvmap = open("/dev/nvmap", O_RDWR | O_CLOEXEC);
  printf("nvmap_open=%d\n", nvmap >= 0 ? 0 : errno);
  if (nvmap >= 0) {
    /* A real object, so that a call past the permission check succeeds in nvmap. */
    uint32_t create[2] = {0x1000, 0};
    printf("create=%d\n", err_of(ioctl(nvmap, NVMAP_CREATE, create)));
    uint32_t gid[2] = {0, create[1]};
    printf("get_id=%d\n", err_of(ioctl(nvmap, NVMAP_GET_ID, gid)));
    uint32_t fid[2] = {gid[0], 0};
    printf("from_id=%d\n", err_of(ioctl(nvmap, NVMAP_FROM_ID, fid)));
    printf("from_id_same_handle=%d\n", create[1] != 0 && fid[1] == create[1]);
    uint64_t ex[2] = {0x1234, create[1]};
    printf("export=%d\n", err_of(ioctl(nvmap, NVMAP_EXPORT_FOR_ARUID, ex)));
    /* FREE of the duplicate FROM_ID made, then of the last reference (EINVAL when FROM_ID made
     * none: the first FREE dropped the only one). */
    uint32_t fr[6] = {create[1], 0, 0, 0, 0, 0};
    printf("free_dup=%d\n", err_of(ioctl(nvmap, NVMAP_FREE, fr)));
    uint32_t fr2[6] = {create[1], 0, 0, 0, 0, 0};
    printf("free_last=%d\n", err_of(ioctl(nvmap, NVMAP_FREE, fr2)));
  }
  int gpu = open("/dev/nvhost-gpu", O_RDWR | O_CLOEXEC);
  printf("gpu_open=%d\n", gpu >= 0 ? 0 : errno);
  if (gpu >= 0) {
    /* A GPFIFO, so that a submit the policy allows succeeds; disabled, so that the zeroed
     * entries never run. */
    uint32_t ring[2] = {64, 0};
    printf("alloc_gpfifo=%d\n", err_of(ioctl(gpu, ALLOC_GPFIFO, ring)));
    printf("disable=%d\n", err_of(ioctl(gpu, CHANNEL_DISABLE, 0)));
    static uint64_t s[3 + 64];
    memset(s, 0, sizeof s);
    ((uint32_t*)s)[2] = (uint32_t)entries;
    printf("submit=%d\n", err_of(ioctl(gpu, SUBMIT_GPFIFO_BASE | ((24u + 8u * entries) << 16), s)));
  }
  int nvdrv = open("/dev/nvdrv", O_RDWR | O_CLOEXEC);
  printf("nvdrv_open=%d\n", nvdrv >= 0 ? 0 : errno);
  if (nvdrv >= 0) {
    struct nvdrv_init in = {0, init_size, 0xFFFFFFFF};
    if (ioctl(nvdrv, NVDRV_INITIALIZE, &in) != 0) fail("INITIALIZE");
    printf("init=0x%x\n", in.error);
    uint32_t fd = nv_open(nvdrv, "/dev/nvhost-ctrl");
    printf("nv_open=0x%x\n", fd);
    if (!(fd >> 31)) {
      uint32_t id = 6;
      printf("nv_incr=0x%x\n", nv_ioctl(nvdrv, fd, SYNCPT_INCR, &id));
    }
  }
  printf("done=1\n");
  return 0;
}

static int hold(int n, const char* path) {
  int held = 0, first_error = 0;
  for (int i = 0; i < n; ++i) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0)
      ++held;
    else if (!first_error)
      first_error = errno;
  }
  printf("held=%d first_error=%d\n", held, first_error);
  return 0;
}

/* The trace's session-end race: the close is the last thing the guest does before it exits. */
static int lastclose(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail(path);
  printf("fd=%d\n", fd);
  close(fd);
  _exit(0);
}

static int usage(const char* why) {
  fprintf(stderr,
          "nvdrv_guest: %s\nusage: nvdrv_guest opens PATH... | service | variable | trace | "
          "sweep PATH CODE... | policy ENTRIES INIT_SIZE [more] | hold N PATH | lastclose PATH\n",
          why);
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage("missing MODE");
  setvbuf(stdout, NULL, _IONBF, 0);
  if (!strcmp(argv[1], "opens")) return opens(argc - 2, argv + 2);
  if (!strcmp(argv[1], "service")) return service();
  if (!strcmp(argv[1], "variable")) return variable();
  if (!strcmp(argv[1], "trace")) return trace();
  if (!strcmp(argv[1], "sweep") && argc >= 3) return sweep(argc - 2, argv + 2);
  if (!strcmp(argv[1], "policy") && argc >= 4)
    return policy(atoi(argv[2]), (uint32_t)strtoul(argv[3], NULL, 0), argc >= 5);
  if (!strcmp(argv[1], "hold") && argc >= 4) return hold(atoi(argv[2]), argv[3]);
  if (!strcmp(argv[1], "lastclose") && argc >= 3) return lastclose(argv[2]);
  fprintf(stderr, "nvdrv_guest: unknown mode, or its arguments missing: %s\n", argv[1]);
  return usage("bad arguments");
}
