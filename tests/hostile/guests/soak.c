/* The soak guest (tests/hostile/soak_test.cc): round after round it creates
 * and destroys every kind of resource a guest can make the sentry hold, through both the Linux
 * nodes and /dev/nvdrv: device sessions, syncpoint events and their eventfds, nvdrv fds and
 * QueryEvent eventfds, nvmap objects over its own and over sentry memory, nvmap clients of
 * forked processes, address spaces with mappings, reservations and REMAP pieces, channels with a
 * submitted job, a parked syncpoint wait that times out. After round 1 and after the last round
 * it prints "held=1" / "held=2" and waits for a line on standard input, holding nothing but its
 * /dev/nvdrv session, so the test can compare the sentry's fds and RSS at the two points.
 *   soak ROUNDS */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvclient.h"

#define SYNCPT_ALLOC_EVENT 0xC004001Fu
#define SYNCPT_FREE_EVENT 0xC0040020u
#define NVGPU_AS_REMAP_BASE 0xC0004114u
struct remap_op {
  uint16_t flags, kind;
  uint32_t mem_handle, mem_offset_in_pages, virt_offset_in_pages, num_pages;
};

static struct nvc direct, service;
static int holds;

static void must(const char* what, int rc) {
  if (rc != 0) {
    printf("failed=%s error=%d round_holds=%d\n", what, rc, holds);
    fflush(stdout);
    exit(3);
  }
}

static void hold(void) {
  printf("held=%d\n", ++holds);
  fflush(stdout);
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) {
  }
}

/* Syncpoint events on a Linux ctrl fd: allocate, query nothing, free half, close with the rest. */
static void ctrl_events(void) {
  int fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  must("open ctrl", fd < 0 ? -errno : 0);
  for (uint32_t s = 0; s < 8; s++) {
    uint32_t slot = s;
    must("ALLOC_EVENT", ioctl(fd, SYNCPT_ALLOC_EVENT, &slot) == 0 ? 0 : -errno);
  }
  for (uint32_t s = 0; s < 8; s += 2) {
    uint32_t slot = s;
    must("FREE_EVENT", ioctl(fd, SYNCPT_FREE_EVENT, &slot) == 0 ? 0 : -errno);
  }
  /* A wait that parks in the sentry and times out. */
  struct nvhost_id_value r = {1, 0};
  must("SYNCPT_READ", ioctl(fd, NVHOST_CTRL_SYNCPT_READ, &r) == 0 ? 0 : -errno);
  struct nvhost_wait_ex w = {1, r.value + 1000, 1, 0};
  int rc = ioctl(fd, NVHOST_CTRL_SYNCPT_WAITEX, &w) == 0 ? 0 : -errno;
  if (rc != -ETIMEDOUT && rc != -EAGAIN) must("SYNCPT_WAITEX (expected a timeout)", rc ? rc : -1);
  close(fd);
}

/* nvdrv fds and their QueryEvent eventfds. */
static void nvdrv_events(void) {
  uint32_t gpu_ctrl, ctrl;
  must("nvdrv open ctrl-gpu", nvc_open(&service, "/dev/nvhost-ctrl-gpu", &gpu_ctrl));
  must("nvdrv open ctrl", nvc_open(&service, "/dev/nvhost-ctrl", &ctrl));
  for (uint32_t id = 1; id <= 2; id++) {
    int efd = -1;
    must("QueryEvent ctrl-gpu", nvc_query_event(&service, gpu_ctrl, id, &efd));
    close(efd);
  }
  uint32_t slot = 3;
  must("nvdrv ALLOC_EVENT", nvc_ioctl(&service, ctrl, SYNCPT_ALLOC_EVENT, &slot));
  int efd = -1;
  must("QueryEvent ctrl", nvc_query_event(&service, ctrl, 0x10000000u | 3, &efd));
  close(efd);
  must("nvdrv close", nvc_close(&service, gpu_ctrl));
  must("nvdrv close", nvc_close(&service, ctrl));
}

/* Address spaces, nvmap objects (guest and sentry memory), mappings, reservations, REMAP, a
 * channel with one job, all through `c`. */
static void gpu_work(struct nvc* c, uint8_t* mem) {
  uint32_t nvmap, ctrl, as, ch;
  must("open nvmap", nvc_open(c, "/dev/nvmap", &nvmap));
  must("open ctrl", nvc_open(c, "/dev/nvhost-ctrl", &ctrl));
  must("open as", nvc_open(c, "/dev/nvhost-as-gpu", &as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .as_fd = -1, .big_page_size = 0x20000};
  must("ALLOC_AS_EX", nvc_ioctl(c, as, NVGPU_AS_ALLOC_AS_EX, &a));
  uint32_t push_h;
  uint64_t push_va;
  must("map pushbuffer", nvc_map_memory(c, nvmap, as, mem, 0x20000, 0x20000, &push_h, &push_va));
  for (int i = 0; i < 16; i++) {
    struct nvgpu_as_map_ex m = {0, 0xFFFFFFFFu, push_h, 0, 0, 0x1000, 0};
    must("MAP_BUFFER_EX", nvc_ioctl(c, as, NVGPU_AS_MAP_BUFFER_EX, &m));
    if (i % 2 == 0) {
      struct nvgpu_as_unmap u = {m.offset};
      must("UNMAP_BUFFER", nvc_ioctl(c, as, NVGPU_AS_UNMAP_BUFFER, &u));
    }
  }
  /* Sentry memory behind an object (no address), mapped into a sparse reservation by REMAP. */
  struct nvmap_create cr = {0x40000, 0};
  must("CREATE", nvc_ioctl(c, nvmap, NVMAP_IOC_CREATE, &cr));
  struct nvmap_alloc al = {cr.handle, 0, 1, 0x20000, 0, {0}, 0};
  must("ALLOC sentry memory", nvc_ioctl(c, nvmap, NVMAP_IOC_ALLOC, &al));
  struct nvgpu_as_alloc_space sp = {16, 0x20000, 2, 0, 0};
  must("ALLOC_SPACE", nvc_ioctl(c, as, NVGPU_AS_ALLOC_SPACE, &sp));
  struct {
    struct remap_op op[4];
  } rm;
  const uint32_t first = (uint32_t)(sp.offset / 0x20000);
  for (uint32_t i = 0; i < 4; i++) {
    struct remap_op op = {0, 0, cr.handle, i % 2, first + 2 * i, 1};
    rm.op[i] = op;
  }
  must("REMAP", nvc_ioctl(c, as, NVGPU_AS_REMAP_BASE | (uint32_t)sizeof rm << 16, &rm));
  /* A channel that runs one job and signals its fence. */
  const char* step = "";
  int rc = nvc_make_channel(c, nvmap, as, 0x80, &ch, &step);
  must(step, rc);
  struct nvc_push p = {0};
  nvc_push_incr(&p, 0, 0x000, 1, 0xB197u);
  memcpy(mem, p.words, p.count * 4);
  struct {
    struct nvgpu_submit_gpfifo h;
    struct nvgpu_gpfifo_entry e[1];
  } s;
  memset(&s, 0, sizeof s);
  s.h.num_entries = 1;
  s.h.flags = NVGPU_SUBMIT_FENCE_GET;
  s.e[0] = nvc_gpfifo_entry(push_va, p.count);
  must("SUBMIT_GPFIFO",
       nvc_ioctl(c, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)sizeof s << 16), &s));
  struct nvhost_wait_ex w = {s.h.fence.id, s.h.fence.value, 5000, 0};
  must("fence", nvc_ioctl(c, ctrl, NVHOST_CTRL_SYNCPT_WAITEX, &w));
  free(p.words);
  struct nvgpu_as_free_space fs = {sp.offset, 16, 0x20000};
  must("FREE_SPACE", nvc_ioctl(c, as, NVGPU_AS_FREE_SPACE, &fs));
  struct nvmap_free f = {cr.handle, 0, 0, 0, 0};
  must("FREE", nvc_ioctl(c, nvmap, NVMAP_IOC_FREE, &f));
  /* nvmap handles belong to the process, not to the fd: free the pushbuffer's too. Its 9
   * mappings are forced out by the free; the address space's own end drops the rest. */
  struct nvmap_free pf = {push_h, 0, 0, 0, 0};
  must("FREE pushbuffer", nvc_ioctl(c, nvmap, NVMAP_IOC_FREE, &pf));
  must("close ch", nvc_close(c, ch));
  must("close as", nvc_close(c, as));
  must("close ctrl", nvc_close(c, ctrl));
  must("close nvmap", nvc_close(c, nvmap));
}

/* A forked process that becomes an nvmap client on an inherited fd, then exits holding it. */
static void child_client(void) {
  int fd = open("/dev/nvmap", O_RDWR | O_CLOEXEC);
  must("open nvmap", fd < 0 ? -errno : 0);
  pid_t pid = fork();
  if (pid == 0) {
    struct nvmap_create cr = {0x1000, 0};
    _exit(ioctl(fd, NVMAP_IOC_CREATE, &cr) == 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  must("child's CREATE", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1);
  close(fd);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  char* end = NULL;
  const long rounds = argc > 1 ? strtol(argv[1], &end, 10) : 20;
  if (argc > 2 || (argc == 2 && (*end != '\0' || rounds < 1 || rounds > 1000000))) {
    fprintf(stderr, "soak: ROUNDS must be a number from 1 to 1000000\nusage: soak [ROUNDS]\n");
    return 2;
  }
  must("init direct", nvc_init(&direct, NVC_VIA_DIRECT, 0));
  must("init nvdrv", nvc_init(&service, NVC_VIA_NVDRV, 0x400000));
  uint8_t* mem = mmap(NULL, 0x20000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (long r = 1; r <= rounds; r++) {
    ctrl_events();
    nvdrv_events();
    gpu_work(&direct, mem);
    gpu_work(&service, mem);
    child_client();
    if (r == 1 || r == rounds) hold();
  }
  printf("rounds=%ld\ndone=1\n", rounds);
  return 0;
}
