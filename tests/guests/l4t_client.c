/*
 * A Linux for Tegra r32.7 client of the six nodes in DIR (argv[1]), speaking the L4T ABI
 * directly (codes and layouts of nvgpu.h, nvmap.h and nvhost_ioctl.h, typed in here): the
 * fake Jetson's integration test (tests/integration/fake_l4t_test.cc) runs it against
 * `nvsentry fake-l4t DIR`. Each step prints one line; any failure exits 1 naming it.
 *
 * nvmap CREATE/ALLOC/WRITE/READ (strided) round trip; GET_CHARACTERISTICS by pointer; an
 * address space (the node's open) with MAP_BUFFER_EX; a channel refused everything until it is
 * in a TSG (ALLOC_GPFIFO_EX EINVAL, SUBMIT_GPFIFO ETIMEDOUT, GET_TIMEDOUT 1), then bound to a TSG
 * of its own (an open of nvhost-tsg-gpu) and to the address space, SET_NVMAP_FD,
 * ALLOC_GPFIFO_EX, ALLOC_OBJ_CTX, a pushbuffer that releases a 3D report semaphore submitted with
 * FENCE_GET, SYNCPT_WAITEX on the fence, the semaphore read back; a wait that times out (EAGAIN);
 * bad pointers (EFAULT), a bad fd (EINVAL), an unknown code (ENOTTY).
 *
 * `l4t_client --fds DIR` (run under `nvsentry fake-l4t DIR -- l4t_client --fds DIR`) also asks for
 * the calls that return fds, as r32.7.4 hands them out (docs/host-abi.md L4T-NODE-7): ctrl-gpu
 * ALLOC_AS with big pages of 128 KiB, 64 KiB and the default (64 KiB on GM20B, L4T-AS-1), OPEN_TSG
 * and OPEN_CHANNEL, and sets a channel up on those fds alone, and expects GM20B's 64 KiB default;
 * and nvmap's handles as fds (L4T-MAP-1, -3, -7): GET_FD, FROM_FD, FREE as close, and the dma-buf
 * lookups' EBADF and EINVAL (L4T-NODE-8); and the TSG's EVENT_ID_CTRL, whose BLOCKING_SYNC fd
 * polls readable after a non-stall interrupt (L4T-TSG-14). Without --fds, ALLOC_AS must answer
 * ENOTTY (the FUSE-only fake cannot hand out an fd) and the default is the sim's 128 KiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* nvmap.h */
#define NVMAP_IOC_CREATE 0xC0084E00u
#define NVMAP_IOC_ALLOC 0x40104E03u
#define NVMAP_IOC_FREE 0x00004E04u
#define NVMAP_IOC_WRITE 0x40204E06u
#define NVMAP_IOC_READ 0x40204E07u
#define NVMAP_IOC_GET_ID 0xC0084E0Du
#define NVMAP_IOC_GET_FD 0xC0084E0Fu
#define NVMAP_IOC_FROM_FD 0xC0084E10u
#define NVMAP_IOC_PARAMETERS 0x80384E1Bu
struct nvmap_create_handle {
  uint32_t size, handle;
};
struct nvmap_alloc_handle {
  uint32_t handle, heap_mask, flags, align;
};
struct nvmap_rw_handle {
  uint64_t addr;
  uint32_t handle, offset, elem_size, hmem_stride, user_stride, count;
};
struct nvmap_handle_parameters {
  uint8_t contig, pad0[3];
  uint32_t import_id, handle, heap_number, access_flags, pad1;
  uint64_t heap, align, coherency, size;
};

/* nvhost_ioctl.h */
#define NVHOST_IOCTL_CTRL_SYNCPT_READ 0xC0084801u
#define NVHOST_IOCTL_CTRL_SYNCPT_WAITEX 0xC0104806u
struct nvhost_ctrl_syncpt_read_args {
  uint32_t id, value;
};
struct nvhost_ctrl_syncpt_waitex_args {
  uint32_t id, thresh;
  int32_t timeout;
  uint32_t value;
};

/* nvgpu.h */
#define NVGPU_GPU_IOCTL_GET_CHARACTERISTICS 0xC0104705u
#define NVGPU_GPU_IOCTL_ALLOC_AS 0xC0104708u
#define NVGPU_GPU_IOCTL_OPEN_TSG 0xC0084709u
#define NVGPU_GPU_IOCTL_OPEN_CHANNEL 0xC004470Bu
#define NVGPU_AS_IOCTL_BIND_CHANNEL 0xC0044101u
#define NVGPU_AS_IOCTL_MAP_BUFFER_EX 0xC0284107u
#define NVGPU_AS_IOCTL_GET_VA_REGIONS 0xC0104108u
#define NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD 0x40044805u
#define NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO 0xC018486Bu
#define NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX 0xC010486Cu
#define NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX 0x4020487Bu
#define NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT 0x8004480Cu
#define NVGPU_TSG_IOCTL_BIND_CHANNEL 0x40045401u
#define NVGPU_IOCTL_TSG_EVENT_ID_CTRL 0xC0105407u
struct nvgpu_event_id_ctrl_args {
  uint32_t cmd; /* 1: ENABLE */
  uint32_t event_id;
  int32_t event_fd; /* out */
  uint32_t padding;
};
#define NVGPU_IOCTL_CHANNEL_EVENT_ID_BLOCKING_SYNC 2u
#define NVGPU_IOCTL_CHANNEL_EVENT_ID_MAX 6u
#define NVGPU_AS_MAP_BUFFER_FLAGS_DIRECT_KIND_CTRL (1u << 8)
#define NVGPU_SUBMIT_GPFIFO_FLAGS_FENCE_GET (1u << 1)
#define NVGPU_SUBMIT_GPFIFO_FLAGS_SYNC_FENCE (1u << 3)
struct nvgpu_gpu_get_characteristics {
  uint64_t buf_size, buf_addr;
};
struct nvgpu_alloc_as_args {
  uint32_t big_page_size;
  int32_t as_fd;
  uint32_t flags, reserved;
};
struct nvgpu_gpu_open_tsg_args {
  uint32_t tsg_fd, reserved;
};
struct nvgpu_gpu_open_channel_args {
  int32_t channel_fd; /* in: runlist_id (-1: graphics); out: the channel's fd */
};
struct nvgpu_as_bind_channel_args {
  uint32_t channel_fd;
};
struct nvgpu_as_map_buffer_ex_args {
  uint32_t flags;
  int16_t compr_kind, incompr_kind;
  uint32_t dmabuf_fd, page_size;
  uint64_t buffer_offset, mapping_size, offset;
};
struct nvgpu_as_va_region {
  uint64_t offset;
  uint32_t page_size, reserved;
  uint64_t pages;
};
struct nvgpu_as_get_va_regions_args {
  uint64_t buf_addr;
  uint32_t buf_size, reserved;
};
struct nvgpu_set_nvmap_fd_args {
  uint32_t fd;
};
struct nvgpu_gpfifo_entry {
  uint32_t entry0, entry1;
};
struct nvgpu_fence {
  uint32_t id, value;
};
struct nvgpu_submit_gpfifo_args {
  uint64_t gpfifo;
  uint32_t num_entries, flags;
  struct nvgpu_fence fence;
};
struct nvgpu_alloc_obj_ctx_args {
  uint32_t class_num, flags;
  uint64_t obj_id;
};
struct nvgpu_alloc_gpfifo_ex_args {
  uint32_t num_entries, num_inflight_jobs, flags, reserved[5];
};

#define CLASS_3D 0xB197u
#define BAD_POINTER 8u /* never mapped */

static const char* dir;

static void fail(const char* what) {
  fprintf(stderr, "l4t_client: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "l4t_client: %s\n", what);
    exit(1);
  }
}

static int open_node(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail(path);
  return fd;
}

/* An ioctl that must fail with `err`. */
static void expect_errno(int fd, unsigned long code, void* arg, int err, const char* what) {
  errno = 0;
  if (ioctl(fd, code, arg) == 0 || errno != err) {
    fprintf(stderr, "l4t_client: %s: expected %s, got %s\n", what, strerror(err), strerror(errno));
    exit(1);
  }
  printf("%s: %s as expected\n", what, strerror(err));
}

struct buffer {
  uint32_t handle;
  uint64_t gpu;
};

static struct buffer make_buffer(int nvmap, int as, uint32_t size) {
  struct buffer b = {0, 0};
  struct nvmap_create_handle c = {size, 0};
  if (ioctl(nvmap, NVMAP_IOC_CREATE, &c) != 0) fail("CREATE");
  struct nvmap_alloc_handle a = {c.handle, 1u << 0, 0, 4096};
  if (ioctl(nvmap, NVMAP_IOC_ALLOC, &a) != 0) fail("ALLOC");
  b.handle = c.handle;
  if (as >= 0) {
    struct nvgpu_as_map_buffer_ex_args m;
    memset(&m, 0, sizeof m);
    m.flags = NVGPU_AS_MAP_BUFFER_FLAGS_DIRECT_KIND_CTRL;
    m.compr_kind = -1;
    m.incompr_kind = 0; /* pitch */
    m.dmabuf_fd = c.handle;
    if (ioctl(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m) != 0) fail("MAP_BUFFER_EX");
    expect(m.offset != 0, "MAP_BUFFER_EX gave no address");
    b.gpu = m.offset;
  }
  return b;
}

static void nvmap_rw(int nvmap, unsigned long code, uint32_t handle, void* buf, uint32_t offset,
                     uint32_t elem, uint32_t hstride, uint32_t ustride, uint32_t count,
                     const char* what) {
  struct nvmap_rw_handle rw = {
      (uint64_t)(uintptr_t)buf, handle, offset, elem, hstride, ustride, count};
  if (ioctl(nvmap, code, &rw) != 0) fail(what);
  /* r32.7.4 writes the bytes copied into count, although the code is _IOW. */
  expect(rw.count == elem * count, "READ/WRITE: count is not the bytes copied");
}

/* DIR must be a directory: a word starting with '-' is an option this program does not have. */
static int bad_dir(const char* prog, const char* dir) {
  struct stat st;
  if (dir[0] == '-')
    fprintf(stderr, "%s: unknown option '%s'\n", prog, dir);
  else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    fprintf(stderr, "%s: '%s' is not a directory\n", prog, dir);
  else
    return 0;
  return 1;
}

/* nvmap handles are dma-buf fds (L4T-MAP-1, -3, -7, L4T-NODE-8): close-on-exec fds of this
 * process, good on any nvmap open and outliving the one that made them; GET_FD and FROM_FD give
 * more fds of the same buffer; FREE closes the fd; a number that is no dma-buf is refused with
 * dma_buf_get's errno. */
static void handle_fds(int nvmap, int as) {
  int other = open_node("nvmap");
  struct buffer b = make_buffer(other, -1, 4096);
  const int fd = (int)b.handle;
  const int flags = fcntl(fd, F_GETFD);
  expect(flags >= 0 && (flags & FD_CLOEXEC), "CREATE: the handle is no close-on-exec fd");
  uint32_t word = 0xFD00D1E5u;
  nvmap_rw(other, NVMAP_IOC_WRITE, b.handle, &word, 0, 4, 4, 4, 1, "WRITE through a handle fd");
  close(other); /* the object lives on in its fd */
  struct nvmap_create_handle get = {0, b.handle};
  if (ioctl(nvmap, NVMAP_IOC_GET_FD, &get) != 0) fail("GET_FD");
  struct nvmap_create_handle from = {(uint32_t)fd, 0};
  if (ioctl(nvmap, NVMAP_IOC_FROM_FD, &from) != 0) fail("FROM_FD");
  expect((int)get.size != fd && (int)from.handle != fd && (int)get.size != (int)from.handle,
         "GET_FD/FROM_FD: not new fds");
  if (ioctl(nvmap, NVMAP_IOC_FREE, (unsigned long)fd) != 0) fail("FREE of a handle fd");
  expect(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "FREE did not close the handle fd");
  uint32_t back = 0;
  nvmap_rw(nvmap, NVMAP_IOC_READ, get.size, &back, 0, 4, 4, 4, 1, "READ through GET_FD's fd");
  expect(back == word, "GET_FD's fd: another buffer");
  printf("nvmap: the handle is an fd; GET_FD and FROM_FD name its buffer after FREE closed it\n");
  struct nvgpu_as_map_buffer_ex_args m;
  memset(&m, 0, sizeof m);
  m.flags = NVGPU_AS_MAP_BUFFER_FLAGS_DIRECT_KIND_CTRL;
  m.compr_kind = -1;
  m.dmabuf_fd = (uint32_t)fd; /* closed by FREE */
  expect_errno(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m, EBADF, "MAP_BUFFER_EX of a closed fd");
  m.dmabuf_fd = (uint32_t)nvmap;
  expect_errno(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m, EINVAL, "MAP_BUFFER_EX of an nvmap open");
  m.dmabuf_fd = from.handle;
  if (ioctl(as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &m) != 0) fail("MAP_BUFFER_EX of FROM_FD's fd");
  struct nvmap_create_handle not_dmabuf = {(uint32_t)as, 0};
  expect_errno(nvmap, NVMAP_IOC_FROM_FD, &not_dmabuf, EINVAL, "FROM_FD of an address space fd");
  int spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (spare < 0) fail("/dev/null");
  if (ioctl(nvmap, NVMAP_IOC_FREE, (unsigned long)spare) != 0) fail("FREE of another fd");
  expect(fcntl(spare, F_GETFD) < 0, "FREE did not close another fd (r32.7.4's sys_close)");
  if (ioctl(nvmap, NVMAP_IOC_FREE, (unsigned long)get.size) != 0) fail("FREE of GET_FD's fd");
  if (ioctl(nvmap, NVMAP_IOC_FREE, (unsigned long)from.handle) != 0) fail("FREE of FROM_FD's fd");
  printf("nvmap: dma-buf fds looked up in the fd table; FREE closes any fd\n");
}

/* The big page size of an address space: its second region's page size. */
static uint32_t big_pages_of(int as) {
  struct nvgpu_as_va_region regions[2];
  struct nvgpu_as_get_va_regions_args va = {(uint64_t)(uintptr_t)regions, sizeof regions, 0};
  if (ioctl(as, NVGPU_AS_IOCTL_GET_VA_REGIONS, &va) != 0) fail("GET_VA_REGIONS");
  expect(va.buf_size == sizeof regions, "GET_VA_REGIONS: not two regions");
  return regions[1].page_size;
}

/* ALLOC_AS with big pages of `big` (0: the default): the new fd, whose space has `expected`. */
static int alloc_as(int ctrl_gpu, uint32_t big, uint32_t expected) {
  struct nvgpu_alloc_as_args a = {big, -1, 0, 0};
  if (ioctl(ctrl_gpu, NVGPU_GPU_IOCTL_ALLOC_AS, &a) != 0) fail("ALLOC_AS");
  expect(a.as_fd >= 0, "ALLOC_AS: no fd");
  const uint32_t got = big_pages_of(a.as_fd);
  printf("ALLOC_AS(%u): fd with big pages of %u\n", big, got);
  expect(got == expected, "ALLOC_AS: the address space's big page size");
  return a.as_fd;
}

/* A TSG's event fd (L4T-TSG-14): BLOCKING_SYNC's fd polls readable once a channel of the TSG
 * runs the host's NON_STALL_INTERRUPT (written into `b`, mapped in the channel's space). */
static void tsg_event(int tsg, int ch, int nvmap, struct buffer b) {
  struct nvgpu_event_id_ctrl_args past = {1, NVGPU_IOCTL_CHANNEL_EVENT_ID_MAX, -1, 0};
  expect_errno(tsg, NVGPU_IOCTL_TSG_EVENT_ID_CTRL, &past, EINVAL, "EVENT_ID_CTRL of event 6");
  struct nvgpu_event_id_ctrl_args ev = {1, NVGPU_IOCTL_CHANNEL_EVENT_ID_BLOCKING_SYNC, -1, 0};
  if (ioctl(tsg, NVGPU_IOCTL_TSG_EVENT_ID_CTRL, &ev) != 0) fail("EVENT_ID_CTRL");
  const int flags = fcntl(ev.event_fd, F_GETFD);
  expect(flags >= 0 && !(flags & FD_CLOEXEC), "EVENT_ID_CTRL: no fd, or a close-on-exec one");
  struct nvgpu_event_id_ctrl_args twice = ev;
  expect_errno(tsg, NVGPU_IOCTL_TSG_EVENT_ID_CTRL, &twice, EINVAL, "EVENT_ID_CTRL twice");
  struct pollfd p = {ev.event_fd, POLLIN, 0};
  expect(poll(&p, 1, 0) == 0, "the event fd is readable before any event");
  const uint32_t words[] = {(1u << 29) | (1u << 16) | (0x20 >> 2), 0}; /* NON_STALL_INTERRUPT */
  nvmap_rw(nvmap, NVMAP_IOC_WRITE, b.handle, (void*)words, 0, sizeof words, sizeof words,
           sizeof words, 1, "WRITE NON_STALL_INTERRUPT");
  struct nvgpu_gpfifo_entry entry = {(uint32_t)b.gpu & ~3u,
                                     ((uint32_t)(b.gpu >> 32) & 0xFF) | (2u << 10)};
  struct nvgpu_submit_gpfifo_args sub = {(uint64_t)(uintptr_t)&entry, 1, 0, {0, 0}};
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, &sub) != 0) fail("SUBMIT NON_STALL_INTERRUPT");
  expect(poll(&p, 1, 10000) == 1 && (p.revents & POLLIN), "BLOCKING_SYNC was never posted");
  /* gk20a_event_id_poll clears the event it reports. */
  expect(poll(&p, 1, 0) == 0, "the event fd is still readable after a poll reported it");
  close(ev.event_fd);
  printf("EVENT_ID_CTRL: BLOCKING_SYNC's fd polled readable after a non-stall interrupt\n");
}

/* The calls that return fds (L4T-NODE-7, L4T-CTRL-11, L4T-TSG-6): a channel set up on them. */
static void fd_calls(int ctrl_gpu, int nvmap) {
  int as128 = alloc_as(ctrl_gpu, 0x20000, 0x20000);
  int as64 = alloc_as(ctrl_gpu, 0x10000, 0x10000);
  int as_default = alloc_as(ctrl_gpu, 0, 0x10000);
  struct nvgpu_alloc_as_args odd = {0x30000, -1, 0, 0};
  expect_errno(ctrl_gpu, NVGPU_GPU_IOCTL_ALLOC_AS, &odd, EINVAL, "ALLOC_AS of 192 KiB pages");
  struct nvgpu_gpu_open_tsg_args t = {0, 0};
  if (ioctl(ctrl_gpu, NVGPU_GPU_IOCTL_OPEN_TSG, &t) != 0) fail("OPEN_TSG");
  struct nvgpu_gpu_open_channel_args oc = {-1};
  if (ioctl(ctrl_gpu, NVGPU_GPU_IOCTL_OPEN_CHANNEL, &oc) != 0) fail("OPEN_CHANNEL");
  printf("OPEN_TSG: fd; OPEN_CHANNEL: fd\n");
  uint32_t timedout = 0;
  if (ioctl(oc.channel_fd, NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, &timedout) != 0) fail("GET_TIMEDOUT");
  expect(timedout == 1, "GET_TIMEDOUT of an OPEN_CHANNEL channel in no TSG");
  int channel_fd = oc.channel_fd;
  if (ioctl((int)t.tsg_fd, NVGPU_TSG_IOCTL_BIND_CHANNEL, &channel_fd) != 0)
    fail("TSG BIND_CHANNEL of OPEN_TSG's fd");
  struct nvgpu_as_bind_channel_args bind = {(uint32_t)oc.channel_fd};
  if (ioctl(as128, NVGPU_AS_IOCTL_BIND_CHANNEL, &bind) != 0) fail("BIND_CHANNEL of ALLOC_AS's fd");
  struct nvgpu_set_nvmap_fd_args snf = {(uint32_t)nvmap};
  if (ioctl(oc.channel_fd, NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD, &snf) != 0) fail("SET_NVMAP_FD");
  struct nvgpu_alloc_gpfifo_ex_args gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 128;
  if (ioctl(oc.channel_fd, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX, &gp) != 0) fail("ALLOC_GPFIFO_EX");
  struct nvgpu_alloc_obj_ctx_args obj = {CLASS_3D, 0, 0};
  if (ioctl(oc.channel_fd, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &obj) != 0) fail("ALLOC_OBJ_CTX");
  struct buffer b = make_buffer(nvmap, as128, 4096);
  expect(b.gpu >= (uint64_t)0x20000 << 10, "a map in ALLOC_AS's space");
  printf("fds: a channel of OPEN_CHANNEL in a TSG of OPEN_TSG and a 128 KiB space of ALLOC_AS\n");
  tsg_event((int)t.tsg_fd, oc.channel_fd, nvmap, b);
  close(oc.channel_fd);
  close((int)t.tsg_fd);
  close(as_default);
  close(as64);
  close(as128);
}

int main(int argc, char** argv) {
  int fds = argc == 3 && strcmp(argv[1], "--fds") == 0;
  if (argc != 2 + fds || bad_dir("l4t_client", argv[1 + fds])) {
    fprintf(stderr, "usage: l4t_client [--fds] DIR\n");
    return 2;
  }
  dir = argv[1 + fds];
  int nvmap = open_node("nvmap");
  int ctrl = open_node("nvhost-ctrl");
  int ctrl_gpu = open_node("nvhost-ctrl-gpu");

  /* 1. nvmap: a strided WRITE, then READ the object back whole. */
  struct buffer scratch = make_buffer(nvmap, -1, 4096);
  uint8_t rows[4][16], back[128];
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 16; i++) rows[r][i] = (uint8_t)(r * 16 + i + 1);
  nvmap_rw(nvmap, NVMAP_IOC_WRITE, scratch.handle, rows, 0, 16, 32, 16, 4, "WRITE");
  memset(back, 0xEE, sizeof back);
  nvmap_rw(nvmap, NVMAP_IOC_READ, scratch.handle, back, 0, sizeof back, sizeof back, sizeof back, 1,
           "READ");
  for (int r = 0; r < 4; r++) {
    expect(memcmp(back + 32 * r, rows[r], 16) == 0, "READ: a written row differs");
    for (int i = 16; i < 32; i++) expect(back[32 * r + i] == 0, "READ: a gap is not zero");
  }
  printf("nvmap: strided WRITE and READ round trip ok\n");
  struct nvmap_create_handle id = {0, scratch.handle};
  expect_errno(nvmap, NVMAP_IOC_GET_ID, &id, ENOTTY, "GET_ID (deprecated on r32.7.4)");
  struct nvmap_handle_parameters par;
  memset(&par, 0, sizeof par);
  par.handle = scratch.handle;
  if (ioctl(nvmap, NVMAP_IOC_PARAMETERS, &par) != 0) fail("PARAMETERS");
  expect(par.size == 4096, "PARAMETERS: size");
  printf("nvmap: handle %u size %llu\n", scratch.handle, (unsigned long long)par.size);
  if (ioctl(nvmap, NVMAP_IOC_FREE, (unsigned long)scratch.handle) != 0) fail("FREE");
  expect_errno(nvmap, NVMAP_IOC_FREE, (void*)(uintptr_t)scratch.handle, EBADF, "FREE twice");

  /* 2. The GPU, by pointer. */
  uint8_t chars[256];
  struct nvgpu_gpu_get_characteristics gc = {sizeof chars, (uint64_t)(uintptr_t)chars};
  if (ioctl(ctrl_gpu, NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, &gc) != 0) fail("GET_CHARACTERISTICS");
  expect(gc.buf_size == 256, "GET_CHARACTERISTICS: size");
  expect(memcmp(chars + 148, "gm20b", 5) == 0, "GET_CHARACTERISTICS: chipname");
  uint32_t threed;
  memcpy(&threed, chars + 68, 4);
  expect(threed == CLASS_3D, "GET_CHARACTERISTICS: 3D class");
  printf("gpu: %s, 3D class 0x%X\n", (const char*)chars + 148, threed);
  uint32_t big_page, pde_bits;
  memcpy(&big_page, chars + 40, 4);
  memcpy(&pde_bits, chars + 48, 4);
  /* GM20B's 64 KiB default (L4T-AS-1); the FUSE-only fake keeps the sim's 128 KiB, since its
   * clients cannot get 128 KiB from ALLOC_AS. */
  const uint32_t default_big = fds ? 0x10000 : 0x20000;
  expect(big_page == default_big && pde_bits == (fds ? 26u : 27u),
         "GET_CHARACTERISTICS: the default big page size");
  struct nvgpu_gpu_get_characteristics bad = {sizeof chars, BAD_POINTER};
  expect_errno(ctrl_gpu, NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, &bad, EFAULT,
               "GET_CHARACTERISTICS at a bad pointer");

  /* 3. An address space (opening the node makes it) and buffers mapped in it. */
  int as = open_node("nvhost-as-gpu");
  struct nvgpu_as_va_region regions[2];
  struct nvgpu_as_get_va_regions_args va = {(uint64_t)(uintptr_t)regions, sizeof regions, 0};
  if (ioctl(as, NVGPU_AS_IOCTL_GET_VA_REGIONS, &va) != 0) fail("GET_VA_REGIONS");
  printf("as: regions at 0x%llx (%u) and 0x%llx (%u)\n", (unsigned long long)regions[0].offset,
         regions[0].page_size, (unsigned long long)regions[1].offset, regions[1].page_size);
  expect(regions[1].page_size == default_big, "an opened address space has the default big pages");
  struct buffer sema = make_buffer(nvmap, as, 4096);
  struct buffer push = make_buffer(nvmap, as, 4096);
  printf("as: semaphore at 0x%llx, pushbuffer at 0x%llx\n", (unsigned long long)sema.gpu,
         (unsigned long long)push.gpu);

  /* 4. A channel in it. r32.7.4's gm20b channel does nothing until it is in a TSG. */
  int ch = open_node("nvhost-gpu");
  uint32_t timedout = 0;
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, &timedout) != 0) fail("GET_TIMEDOUT");
  expect(timedout == 1, "GET_TIMEDOUT of a channel in no TSG");
  struct nvgpu_as_bind_channel_args bind_bad = {(uint32_t)nvmap};
  expect_errno(as, NVGPU_AS_IOCTL_BIND_CHANNEL, &bind_bad, EINVAL, "BIND_CHANNEL of an nvmap fd");
  struct nvgpu_as_bind_channel_args bind = {(uint32_t)ch};
  if (ioctl(as, NVGPU_AS_IOCTL_BIND_CHANNEL, &bind) != 0) fail("BIND_CHANNEL");
  struct nvgpu_alloc_gpfifo_ex_args no_tsg;
  memset(&no_tsg, 0, sizeof no_tsg);
  no_tsg.num_entries = 128;
  expect_errno(ch, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX, &no_tsg, EINVAL,
               "ALLOC_GPFIFO_EX of a channel in no TSG");
  struct nvgpu_submit_gpfifo_args submit_no_tsg = {0, 0, 0, {0, 0}};
  expect_errno(ch, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, &submit_no_tsg, ETIMEDOUT,
               "SUBMIT_GPFIFO of a channel in no TSG");
  int tsg = open_node("nvhost-tsg-gpu");
  int bad_fd = nvmap;
  expect_errno(tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL, &bad_fd, EINVAL,
               "TSG BIND_CHANNEL of an nvmap fd");
  int channel_fd = ch;
  if (ioctl(tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL, &channel_fd) != 0) fail("TSG BIND_CHANNEL");
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, &timedout) != 0) fail("GET_TIMEDOUT");
  expect(timedout == 0, "GET_TIMEDOUT of a channel in a TSG");
  struct nvgpu_set_nvmap_fd_args snf = {(uint32_t)nvmap};
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD, &snf) != 0) fail("SET_NVMAP_FD");
  struct nvgpu_alloc_gpfifo_ex_args gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = 128;
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX, &gp) != 0) fail("ALLOC_GPFIFO_EX");
  struct nvgpu_alloc_obj_ctx_args obj = {CLASS_3D, 0, 0};
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &obj) != 0) fail("ALLOC_OBJ_CTX");
  printf("channel: in a TSG, bound, 128 entries, 3D object\n");

  /* 5. A pushbuffer that releases the 3D report semaphore, written through nvmap WRITE. */
  const uint32_t sequence = 0x5EED0001u;
  uint32_t words[] = {
      (1u << 29) | (1u << 16) | (0u << 13) | (0x000 >> 2),
      CLASS_3D,                                             /* SetObject, subch 0 */
      (1u << 29) | (4u << 16) | (0u << 13) | (0x1B00 >> 2), /* SEMAPHORE_A..D */
      (uint32_t)(sema.gpu >> 32),
      (uint32_t)sema.gpu,
      sequence,
      0u /* release */ | (1u << 4) /* fence */ | (0xFu << 12) /* unit */ | (1u << 28) /* 1 word */,
  };
  const uint32_t nwords = sizeof words / 4;
  nvmap_rw(nvmap, NVMAP_IOC_WRITE, push.handle, words, 0, sizeof words, sizeof words, sizeof words,
           1, "WRITE pushbuffer");
  struct nvgpu_gpfifo_entry entry = {(uint32_t)push.gpu & ~3u,
                                     ((uint32_t)(push.gpu >> 32) & 0xFF) | (nwords << 10)};
  struct nvgpu_submit_gpfifo_args sub = {
      (uint64_t)(uintptr_t)&entry, 1, NVGPU_SUBMIT_GPFIFO_FLAGS_FENCE_GET, {0, 0}};
  struct nvgpu_submit_gpfifo_args sub_bad = sub;
  sub_bad.gpfifo = BAD_POINTER;
  expect_errno(ch, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, &sub_bad, EFAULT,
               "SUBMIT_GPFIFO with entries at a bad pointer");
  if (ioctl(ch, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, &sub) != 0) fail("SUBMIT_GPFIFO");
  printf("submit: fence {%u, %u}\n", sub.fence.id, sub.fence.value);

  /* 6. Wait for the fence, then read the semaphore back. */
  struct nvhost_ctrl_syncpt_waitex_args w = {sub.fence.id, sub.fence.value, 10000, 0};
  if (ioctl(ctrl, NVHOST_IOCTL_CTRL_SYNCPT_WAITEX, &w) != 0) fail("SYNCPT_WAITEX");
  uint32_t got = 0;
  nvmap_rw(nvmap, NVMAP_IOC_READ, sema.handle, &got, 0, 4, 4, 4, 1, "READ semaphore");
  expect(got == sequence, "the semaphore does not hold the sequence");
  printf("fence reached (value %u); semaphore 0x%08X\n", w.value, got);

  /* 6b. With --fds: the same pushbuffer again with SYNC_FENCE, its fence an fd that polls
   * readable once reached (L4T-CH-10, L4T-NODE-7). */
  if (fds) {
    struct nvgpu_submit_gpfifo_args again = {
        (uint64_t)(uintptr_t)&entry,
        1,
        NVGPU_SUBMIT_GPFIFO_FLAGS_FENCE_GET | NVGPU_SUBMIT_GPFIFO_FLAGS_SYNC_FENCE,
        {0, 0}};
    if (ioctl(ch, NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO, &again) != 0) fail("SUBMIT_GPFIFO SYNC_FENCE");
    struct pollfd p = {(int)again.fence.id, POLLIN, 0};
    expect(poll(&p, 1, 10000) == 1 && (p.revents & POLLIN), "the fence fd is not readable");
    close((int)again.fence.id);
    printf("SYNC_FENCE: fence fd polled readable\n");
  }

  /* 7. Refusals. */
  struct nvhost_ctrl_syncpt_waitex_args never = {sub.fence.id, sub.fence.value + 1000, 20, 0};
  expect_errno(ctrl, NVHOST_IOCTL_CTRL_SYNCPT_WAITEX, &never, EAGAIN, "a wait that times out");
  uint32_t x = 0;
  struct nvmap_rw_handle rw_bad = {BAD_POINTER, sema.handle, 0, 4, 4, 4, 1};
  expect_errno(nvmap, NVMAP_IOC_READ, &rw_bad, EFAULT, "READ to a bad pointer");
  struct nvmap_rw_handle rw_out = {(uint64_t)(uintptr_t)&x, sema.handle, 4096, 4, 4, 4, 1};
  expect_errno(nvmap, NVMAP_IOC_READ, &rw_out, EINVAL, "READ past the object");
  expect_errno(ctrl, 0xC0084899u, &x, ENOTTY, "an unknown code");

  /* 8. The calls that return fds. */
  if (fds) {
    fd_calls(ctrl_gpu, nvmap);
    handle_fds(nvmap, as);
  } else {
    struct nvgpu_alloc_as_args a = {0x20000, -1, 0, 0};
    expect_errno(ctrl_gpu, NVGPU_GPU_IOCTL_ALLOC_AS, &a, ENOTTY, "ALLOC_AS over FUSE alone");
  }

  /* 9. Everything closes; the fake frees what these opens made. */
  close(ch);
  close(tsg);
  close(as);
  close(ctrl_gpu);
  close(ctrl);
  close(nvmap);
  printf("l4t_client: ok\n");
  return 0;
}
