/* A hostile guest for tests/hostile/resources_test.cc: it grows one kind of sentry resource as far
 * as the sentry lets it, prints what it got ("key=value"), then "held=1", and waits for a line on
 * standard input (the test reads the sentry's fds, RSS and CPU meanwhile) before it lets go and
 * prints "done=1". Direct Linux ioctls unless said otherwise; errors are printed as -errno or as
 * the NvError through /dev/nvdrv.
 *   events                 opens /dev/nvhost-ctrl and allocates its 64 syncpoint events, session
 *                          after session, until an open or an ALLOC_EVENT is refused
 *   query-events           through /dev/nvdrv: opens /dev/nvhost-ctrl-gpu and queries its two
 *                          events, fd after fd, until refused
 *   nvmap-clients N        forks up to N processes that each make an nvmap object (each one an
 *                          nvmap client, whose pidfd the sentry holds) and stay alive
 *   map-loop N             maps one 4 KiB object into one address space until refused (at most
 *                          N times); after the handshake unmaps them one by one
 *   remap-teardown P       three address spaces, each with P REMAP pieces of one 64 KiB object
 *                          (one sparse reservation of P big pages); after the handshake closes
 *                          the three spaces, opens /dev/nvhost-ctrl (held=2), closes it
 *                          (held=3)
 *   idle                   holds nothing (the sentry's own fds and RSS, for comparison)
 *   unimplemented N        N calls of an ioctl the simulator does not implement (nvgpu
 *                          ALLOC_GPFIFO on /dev/nvhost-vic: a GPU channel's, not VIC's) */
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
#define NVGPU_CHANNEL_ALLOC_GPFIFO 0x40084805u
#define NVGPU_AS_REMAP_BASE 0xC0004114u /* size bits: 20 * ops */
struct remap_op {
  uint16_t flags, kind;
  uint32_t mem_handle, mem_offset_in_pages, virt_offset_in_pages, num_pages;
};
#define MAX_REMAP_OPS (0x3FFF / sizeof(struct remap_op))

static struct nvc nv;

static void must(const char* what, int rc) {
  if (rc != 0) {
    printf("failed=%s error=%d\n", what, rc);
    fflush(stdout);
    exit(3);
  }
}

/* The handshake: the test reads the sentry's state while everything is held. "held=N" counts. */
static void hold(void) {
  static int holds;
  printf("held=%d\n", ++holds);
  fflush(stdout);
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) { /* EOF: go on as well */
  }
}

static void events(void) {
  int sessions = 0, allocated = 0, error = 0;
  for (;;) {
    int fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      error = -errno;
      break;
    }
    sessions++;
    for (uint32_t slot = 0; slot < 64 && error == 0; slot++) {
      uint32_t s = slot;
      if (ioctl(fd, SYNCPT_ALLOC_EVENT, &s) != 0)
        error = -errno;
      else
        allocated++;
    }
    if (error != 0 || sessions >= 400) break;
  }
  printf("sessions=%d events=%d error=%d\n", sessions, allocated, error);
  hold();
}

static void query_events(void) {
  must("init", nvc_init(&nv, NVC_VIA_NVDRV, 0x100000));
  int opened = 0, queried = 0, error = 0;
  while (error == 0 && opened < 2000) {
    uint32_t fd;
    if ((error = nvc_open(&nv, "/dev/nvhost-ctrl-gpu", &fd)) != 0) break;
    opened++;
    for (uint32_t id = 1; id <= 2 && error == 0; id++) {
      int efd = -1;
      if ((error = nvc_query_event(&nv, fd, id, &efd)) == 0) {
        queried++;
        close(efd); /* the guest's copy; the sentry keeps its own */
      }
    }
  }
  printf("opened=%d queried=%d error=%d\n", opened, queried, error);
  hold();
}

static void nvmap_clients(int n) {
  must("init", nvc_init(&nv, NVC_VIA_DIRECT, 0));
  uint32_t nvmap;
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));
  int release[2];
  if (pipe(release) != 0) exit(4);
  int clients = 0, error = 0;
  for (int i = 0; i < n && error == 0; i++) {
    int result[2];
    if (pipe(result) != 0) exit(4);
    pid_t pid = fork();
    if (pid == 0) {
      close(release[1]);
      struct nvmap_create c = {0x1000, 0};
      int rc = nvc_ioctl(&nv, nvmap, NVMAP_IOC_CREATE, &c);
      if (write(result[1], &rc, sizeof rc) != sizeof rc) _exit(5);
      char b;
      while (read(release[0], &b, 1) > 0) {
      }
      _exit(0);
    }
    close(result[1]);
    int rc = -1;
    if (read(result[0], &rc, sizeof rc) != sizeof rc) rc = -EIO;
    close(result[0]);
    if (rc == 0)
      clients++;
    else
      error = rc;
  }
  printf("clients=%d error=%d\n", clients, error);
  hold();
  close(release[1]);
  while (wait(NULL) > 0) {
  }
}

static void make_as(uint32_t* as, uint32_t big_page_size) {
  must("open as", nvc_open(&nv, "/dev/nvhost-as-gpu", as));
  struct nvgpu_as_alloc_as_ex a = {.flags = 1, .as_fd = -1, .big_page_size = big_page_size};
  must("ALLOC_AS_EX", nvc_ioctl(&nv, *as, NVGPU_AS_ALLOC_AS_EX, &a));
}

static uint32_t make_object(uint32_t nvmap, uint32_t size, uint32_t align) {
  void* cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct nvmap_create cr = {size, 0};
  must("CREATE", nvc_ioctl(&nv, nvmap, NVMAP_IOC_CREATE, &cr));
  struct nvmap_alloc al = {cr.handle, 0, 1, align, 0, {0}, (uint64_t)(uintptr_t)cpu};
  must("ALLOC", nvc_ioctl(&nv, nvmap, NVMAP_IOC_ALLOC, &al));
  return cr.handle;
}

static void map_loop(int n) {
  must("init", nvc_init(&nv, NVC_VIA_DIRECT, 0));
  uint32_t nvmap, as;
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));
  make_as(&as, 0x20000);
  const uint32_t h = make_object(nvmap, 0x1000, 0x1000);
  uint64_t* vas = calloc((size_t)n, sizeof *vas);
  int mapped = 0, error = 0;
  while (mapped < n) {
    struct nvgpu_as_map_ex m = {0, 0xFFFFFFFFu, h, 0, 0, 0, 0};
    if ((error = nvc_ioctl(&nv, as, NVGPU_AS_MAP_BUFFER_EX, &m)) != 0) break;
    vas[mapped++] = m.offset;
  }
  printf("mapped=%d error=%d\n", mapped, error);
  hold();
  int unmapped = 0;
  for (int i = 0; i < mapped; i++) {
    struct nvgpu_as_unmap u = {vas[i]};
    if (nvc_ioctl(&nv, as, NVGPU_AS_UNMAP_BUFFER, &u) == 0) unmapped++;
  }
  printf("unmapped=%d\n", unmapped);
}

static void remap_teardown(uint32_t pages) {
  must("init", nvc_init(&nv, NVC_VIA_DIRECT, 0));
  uint32_t nvmap, as[3];
  must("open nvmap", nvc_open(&nv, "/dev/nvmap", &nvmap));
  /* 64 KiB big pages: the big-page region inside the permission window (16-22 GiB) holds 98,304
   * of them. */
  const uint32_t big = 0x10000;
  const uint32_t h = make_object(nvmap, big, big);
  struct remap_op* ops = calloc(MAX_REMAP_OPS, sizeof *ops);
  long pieces = 0;
  for (int s = 0; s < 3; s++) {
    make_as(&as[s], big);
    struct nvgpu_as_alloc_space r = {pages, big, 2 /* sparse */, 0, 0};
    must("ALLOC_SPACE", nvc_ioctl(&nv, as[s], NVGPU_AS_ALLOC_SPACE, &r));
    const uint32_t first = (uint32_t)(r.offset / big);
    for (uint32_t done = 0; done < pages;) {
      uint32_t k = 0;
      for (; k < MAX_REMAP_OPS && done + k < pages; k++) {
        struct remap_op op = {0, 0, h, 0, first + done + k, 1};
        ops[k] = op;
      }
      const uint32_t code = NVGPU_AS_REMAP_BASE | (uint32_t)(k * sizeof *ops) << 16;
      must("REMAP", nvc_ioctl(&nv, as[s], code, ops));
      done += k;
      pieces += k;
    }
  }
  printf("pieces=%ld\n", pieces);
  hold();
  for (int s = 0; s < 3; s++) must("close as", nvc_close(&nv, as[s]));
  /* A session opened after the three closes ends after their ends (one thread ends sessions, in
   * order): once the sentry has let go of it, the spaces' teardown is over. Used once, so that
   * the sentry holds an fd for it (a device file gets its fd at its first call). */
  uint32_t ctrl;
  must("open ctrl", nvc_open(&nv, "/dev/nvhost-ctrl", &ctrl));
  struct {
    uint32_t id, value;
  } read = {0, 0};
  must("SYNCPT_READ", nvc_ioctl(&nv, ctrl, NVHOST_CTRL_SYNCPT_READ, &read));
  hold();
  must("close ctrl", nvc_close(&nv, ctrl));
  hold();
}

static void unimplemented(int n) {
  int fd = open("/dev/nvhost-vic", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("failed=open error=%d\n", -errno);
    exit(3);
  }
  int answered = 0, error = 0;
  for (int i = 0; i < n; i++) {
    uint32_t arg[2] = {0, 0};
    if (ioctl(fd, NVGPU_CHANNEL_ALLOC_GPFIFO, arg) != 0) {
      answered++;
      error = -errno;
    }
  }
  printf("calls=%d refused=%d error=%d\n", n, answered, error);
  hold();
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* mode = argc > 1 ? argv[1] : "";
  const int n = argc > 2 ? atoi(argv[2]) : 0;
  if (strcmp(mode, "events") == 0)
    events();
  else if (strcmp(mode, "query-events") == 0)
    query_events();
  else if (strcmp(mode, "nvmap-clients") == 0)
    nvmap_clients(n);
  else if (strcmp(mode, "map-loop") == 0)
    map_loop(n);
  else if (strcmp(mode, "remap-teardown") == 0)
    remap_teardown((uint32_t)n);
  else if (strcmp(mode, "unimplemented") == 0)
    unimplemented(n);
  else if (strcmp(mode, "idle") == 0)
    hold();
  else {
    fprintf(stderr,
            "resource_hog: unknown mode '%s'\nusage: resource_hog events | query-events | "
            "nvmap-clients N | map-loop N | remap-teardown N | unimplemented N | idle\n",
            mode);
    return 2;
  }
  printf("done=1\n");
  return 0;
}
