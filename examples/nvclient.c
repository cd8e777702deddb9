#define _GNU_SOURCE
#include "nvclient.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvdrv_cmds.h"

static uint32_t code_size(uint32_t code) { return (code >> 16) & 0x3FFF; }

int nvc_init(struct nvc* c, enum nvc_via via, uint32_t tmem_size) {
  memset(c, 0, sizeof *c);
  c->via = via;
  c->nvdrv = -1;
  if (via == NVC_VIA_DIRECT) return 0;
  c->nvdrv = open("/dev/nvdrv", O_RDWR | O_CLOEXEC);
  if (c->nvdrv < 0) return -errno;
  c->transfer_memory =
      mmap(NULL, tmem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c->transfer_memory == MAP_FAILED) return -errno;
  struct nvdrv_init in = {(uint64_t)(uintptr_t)c->transfer_memory, tmem_size, 0};
  if (ioctl(c->nvdrv, NVDRV_INITIALIZE, &in) != 0) return -errno;
  return (int)in.error;
}

int nvc_open(struct nvc* c, const char* path, uint32_t* fd) {
  if (c->via == NVC_VIA_DIRECT) {
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f < 0) return -errno;
    *fd = (uint32_t)f;
    return 0;
  }
  struct nvdrv_open o;
  memset(&o, 0, sizeof o);
  snprintf(o.path, sizeof o.path, "%s", path);
  if (ioctl(c->nvdrv, NVDRV_OPEN, &o) != 0) return -errno;
  *fd = o.fd;
  return (int)o.error;
}

int nvc_close(struct nvc* c, uint32_t fd) {
  if (c->via == NVC_VIA_DIRECT) return close((int)fd) == 0 ? 0 : -errno;
  struct nvdrv_close cl = {fd, 0};
  if (ioctl(c->nvdrv, NVDRV_CLOSE, &cl) != 0) return -errno;
  return (int)cl.error;
}

int nvc_ioctl(struct nvc* c, uint32_t fd, uint32_t code, void* arg) {
  if (c->via == NVC_VIA_DIRECT) return ioctl((int)fd, code, arg) == 0 ? 0 : -errno;
  uint64_t a = (uint64_t)(uintptr_t)arg, n = code_size(code);
  struct nvdrv_ioctl io = {fd, code, a, n, a, n, 0, 0};
  if (ioctl(c->nvdrv, NVDRV_IOCTL, &io) != 0) return -errno;
  return (int)io.error;
}

int nvc_ioctl2(struct nvc* c, uint32_t fd, uint32_t code, void* arg, const void* in2,
               size_t in2_size) {
  if (c->via == NVC_VIA_DIRECT) return -EOPNOTSUPP;
  uint64_t a = (uint64_t)(uintptr_t)arg, n = code_size(code);
  struct nvdrv_ioctl2 io = {fd, code, a, n, (uint64_t)(uintptr_t)in2, in2_size, a, n, 0, 0};
  if (ioctl(c->nvdrv, NVDRV_IOCTL2, &io) != 0) return -errno;
  return (int)io.error;
}

int nvc_query_event(struct nvc* c, uint32_t fd, uint32_t event_id, int* event_fd) {
  if (c->via == NVC_VIA_DIRECT) return -EOPNOTSUPP;
  struct nvdrv_query q = {fd, event_id, 1, -1, 0, 0};
  if (ioctl(c->nvdrv, NVDRV_QUERY_EVENT, &q) != 0) return -errno;
  *event_fd = q.event_fd;
  return (int)q.error;
}

int nvc_dump_status(struct nvc* c) {
  if (c->via == NVC_VIA_DIRECT) return -EOPNOTSUPP;
  return ioctl(c->nvdrv, NVC_IOC(0, 'n', 9, 0), 0) == 0 ? 0 : -errno;
}

const char* nvc_strerror(const struct nvc* c, int err) {
  static __thread char buf[64];
  if (err < 0) return strerror(-err);
  switch (err) {
    case 0x0: return "Success";
    case 0x2: return "NotSupported";
    case 0x3: return "NotInitialized";
    case 0x4: return "BadParameter";
    case 0x5: return "Timeout";
    case 0x6: return "InsufficientMemory";
    case 0x8: return "InvalidState";
    case 0xA: return "InvalidSize";
    case 0xB: return "BadValue";
    case 0xD: return "AlreadyAllocated";
    case 0xE: return "Busy";
    case 0x1000: return "InsufficientTransferMemory";
    case 0x30010: return "AccessDenied";
    case 0x30011: return "DeviceNotFound";
  }
  snprintf(buf, sizeof buf, "NvError 0x%X", (unsigned)err);
  return buf;
}

int nvc_map_memory(struct nvc* c, uint32_t nvmap, uint32_t as, void* cpu, uint32_t size,
                   uint32_t align, uint32_t* handle, uint64_t* gpu_va) {
  struct nvmap_create cr = {size, 0};
  int rc = nvc_ioctl(c, nvmap, NVMAP_IOC_CREATE, &cr);
  if (rc != 0) return rc;
  *handle = cr.handle;
  struct nvmap_alloc al = {cr.handle, 0,   1 /* read-write, cached */, 0x1000,
                           0,         {0}, (uint64_t)(uintptr_t)cpu};
  if ((rc = nvc_ioctl(c, nvmap, NVMAP_IOC_ALLOC, &al)) != 0) return rc;
  struct nvgpu_as_map_ex m = {4 /* cacheable */, 0, cr.handle, 0, 0, 0, align};
  if ((rc = nvc_ioctl(c, as, NVGPU_AS_MAP_BUFFER_EX, &m)) != 0) return rc;
  *gpu_va = m.offset;
  return 0;
}

int nvc_make_channel(struct nvc* c, uint32_t nvmap, uint32_t as, uint32_t entries, uint32_t* ch,
                     const char** step) {
  int rc;
  *step = "open /dev/nvhost-gpu";
  if ((rc = nvc_open(c, "/dev/nvhost-gpu", ch)) != 0) return rc;
  uint32_t nvmap_fd = nvmap;
  *step = "SET_NVMAP_FD";
  if ((rc = nvc_ioctl(c, *ch, NVGPU_CH_SET_NVMAP_FD, &nvmap_fd)) != 0) return rc;
  struct nvgpu_as_bind_channel bind = {*ch};
  *step = "BIND_CHANNEL";
  if ((rc = nvc_ioctl(c, as, NVGPU_AS_BIND_CHANNEL, &bind)) != 0) return rc;
  struct nvgpu_alloc_gpfifo_ex gp;
  memset(&gp, 0, sizeof gp);
  gp.num_entries = entries;
  gp.flags = 1;
  *step = "ALLOC_GPFIFO_EX2";
  if ((rc = nvc_ioctl(c, *ch, NVGPU_CH_ALLOC_GPFIFO_EX2, &gp)) != 0) return rc;
  struct nvgpu_alloc_obj_ctx obj = {0xB197, 0, 0};
  *step = "ALLOC_OBJ_CTX";
  return nvc_ioctl(c, *ch, NVGPU_CH_ALLOC_OBJ_CTX, &obj);
}

int nvc_submit(struct nvc* c, uint32_t ch, const struct nvgpu_gpfifo_entry* entries, uint32_t n,
               uint32_t flags, struct nvgpu_fence* fence) {
  const size_t size = sizeof(struct nvgpu_submit_gpfifo) + n * sizeof(struct nvgpu_gpfifo_entry);
  if (size > 0x3FFF) return -E2BIG; /* the code's 14-bit size field */
  uint8_t* buf = calloc(1, size);
  if (buf == NULL) return -ENOMEM;
  struct nvgpu_submit_gpfifo* h = (struct nvgpu_submit_gpfifo*)buf;
  h->num_entries = n;
  h->flags = flags;
  h->fence = *fence;
  memcpy(buf + sizeof *h, entries, n * sizeof *entries);
  int rc = nvc_ioctl(c, ch, NVGPU_CH_SUBMIT_GPFIFO_BASE | ((uint32_t)size << 16), buf);
  if (rc == 0) *fence = h->fence;
  free(buf);
  return rc;
}

static void push_word(struct nvc_push* p, uint32_t w) {
  if (p->count == p->capacity) {
    p->capacity = p->capacity ? p->capacity * 2 : 256;
    p->words = realloc(p->words, p->capacity * sizeof(uint32_t));
    if (p->words == NULL) abort();
  }
  p->words[p->count++] = w;
}

void nvc_push_method(struct nvc_push* p, uint32_t mode, uint32_t subch, uint32_t method_byte,
                     const uint32_t* args, uint32_t n) {
  push_word(p, (mode << 29) | (n << 16) | (subch << 13) | (method_byte >> 2));
  for (uint32_t i = 0; i < n; i++) push_word(p, args[i]);
}

void nvc_push_incr(struct nvc_push* p, uint32_t subch, uint32_t method_byte, uint32_t n, ...) {
  uint32_t args[16];
  va_list ap;
  va_start(ap, n);
  for (uint32_t i = 0; i < n && i < 16; i++) args[i] = va_arg(ap, uint32_t);
  va_end(ap);
  nvc_push_method(p, 1, subch, method_byte, args, n);
}

void nvc_push_inline(struct nvc_push* p, uint32_t subch, uint32_t method_byte, uint32_t data) {
  push_word(p, (4u << 29) | ((data & 0x1FFF) << 16) | (subch << 13) | (method_byte >> 2));
}

struct nvgpu_gpfifo_entry nvc_gpfifo_entry(uint64_t va, uint32_t words) {
  struct nvgpu_gpfifo_entry e;
  e.entry0 = (uint32_t)va & ~3u;
  e.entry1 = (uint32_t)(va >> 32) & 0xFF;
  e.entry1 |= (words & 0x1FFFFF) << 10;
  return e;
}

void nvc_open_failed(const struct nvc* c, const char* name, const char* argv0, const char* path,
                     int err) {
  fprintf(stderr, "%s: open %s failed: %s\n", name, path, nvc_strerror(c, err));
  if (err == -ENOENT)
    fprintf(stderr,
            "%s: %s is nvsentry's (its simulated GPU), not this machine's: run the program "
            "under it: nvsentry run -- %s\n",
            name, path, argv0);
  else if (err == -EACCES || err == 0x30010 /* AccessDenied */)
    fprintf(stderr,
            "%s: the sandbox's service may not open %s: nvsentry's warning above says which "
            "--service does\n",
            name, path);
}
