/* A small nvdrv client for guest programs, written the way a homebrew client library drives the
 * driver: the codes and layouts of Switchbrew typed out here (guests share no definitions with the
 * sandbox), one call per ioctl, and a pushbuffer builder. Every call goes either through the
 * /dev/nvdrv service endpoint (Initialize, Open, Ioctl/Ioctl2, QueryEvent: what a real nvdrv
 * client does) or straight to the Linux device nodes (open + ioctl). Calls return 0 or an error:
 * the NvError through /dev/nvdrv, the errno (negated) when direct. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVC_IOC(dir, magic, nr, size) \
  (((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)(magic) << 8) | (uint32_t)(nr))

/* ---- nvmap (magic 0x01) ---- */
#define NVMAP_IOC_CREATE 0xC0080101u
#define NVMAP_IOC_FROM_ID 0xC0080103u
#define NVMAP_IOC_ALLOC 0xC0200104u
#define NVMAP_IOC_FREE 0xC0180105u
#define NVMAP_IOC_PARAM 0xC00C0109u
#define NVMAP_IOC_GET_ID 0xC008010Eu
struct nvmap_create {
  uint32_t size, handle;
};
struct nvmap_from_id {
  uint32_t id, handle;
};
struct nvmap_alloc {
  uint32_t handle, heapmask, flags, align;
  uint8_t kind, pad[7];
  uint64_t addr;
};
struct nvmap_free {
  uint32_t handle, pad;
  uint64_t address;
  uint32_t size, flags;
};
struct nvmap_param {
  uint32_t handle, param, result;
};
struct nvmap_get_id {
  uint32_t id, handle;
};

/* ---- nvhost-ctrl (magic 0x00) ---- */
#define NVHOST_CTRL_SYNCPT_READ 0xC0080014u
#define NVHOST_CTRL_SYNCPT_INCR 0x40040015u
#define NVHOST_CTRL_SYNCPT_WAITEX 0xC0100019u
#define NVHOST_CTRL_SYNCPT_READ_MAX 0xC008001Au
#define NVHOST_CTRL_SYNCPT_CLEAR_EVENT_WAIT 0xC004001Cu
#define NVHOST_CTRL_SYNCPT_WAIT_EVENT_EX 0xC010001Eu
#define NVHOST_CTRL_SYNCPT_ALLOC_EVENT 0xC004001Fu
#define NVHOST_CTRL_SYNCPT_FREE_EVENT 0xC0040020u
struct nvhost_id_value {
  uint32_t id, value;
};
struct nvhost_wait_ex {
  uint32_t id, thresh;
  int32_t timeout;
  uint32_t value;
};

/* ---- nvhost-ctrl-gpu ('G') ---- */
#define NVGPU_GPU_GET_CHARACTERISTICS 0xC0B04705u
#define NVGPU_GPU_GET_TPC_MASKS 0xC0184706u
#define NVGPU_GPU_ZCULL_GET_CTX_SIZE 0x80044701u
#define NVGPU_GPU_ZCULL_GET_INFO 0x80284702u
struct nvgpu_characteristics {
  uint32_t arch, impl, rev, num_gpc;
  uint64_t l2_cache_size, on_board_video_memory_size;
  uint32_t num_tpc_per_gpc, bus_type, big_page_size, compression_page_size, pde_coverage_bit_count,
      available_big_page_sizes, gpc_mask, sm_arch_sm_version, sm_arch_spa_version,
      sm_arch_warp_count, gpu_va_bit_count, reserved;
  uint64_t flags;
  uint32_t twod_class, threed_class, compute_class, gpfifo_class, inline_to_memory_class,
      dma_copy_class, max_fbps_count, fbp_en_mask, max_ltc_per_fbp, max_lts_per_ltc,
      max_tex_per_tpc, max_gpc_count, rop_l2_en_mask_0, rop_l2_en_mask_1;
  uint64_t chipname, gr_compbit_store_base_hw;
};
struct nvgpu_get_characteristics {
  uint64_t buf_size, buf_addr;
  struct nvgpu_characteristics gc;
};

/* ---- nvhost-as-gpu ('A') ---- */
#define NVGPU_AS_BIND_CHANNEL 0x40044101u
#define NVGPU_AS_ALLOC_SPACE 0xC0184102u
#define NVGPU_AS_FREE_SPACE 0xC0104103u
#define NVGPU_AS_UNMAP_BUFFER 0xC0084105u
#define NVGPU_AS_MAP_BUFFER_EX 0xC0284106u
#define NVGPU_AS_ALLOC_AS_EX 0x40284109u
struct nvgpu_as_bind_channel {
  uint32_t channel_fd;
};
struct nvgpu_as_alloc_space {
  uint32_t pages, page_size, flags, pad;
  uint64_t offset;
};
struct nvgpu_as_free_space {
  uint64_t offset;
  uint32_t pages, page_size;
};
struct nvgpu_as_unmap {
  uint64_t offset;
};
struct nvgpu_as_map_ex {
  uint32_t flags, kind, mem_id, reserved;
  uint64_t buffer_offset, mapping_size, offset;
};
/* The field order real clients send (libnx's nvioctlNvhostAsGpu_InitializeEx passes flags 1);
 * Switchbrew lists big_page_size first (docs/guest-abi.md). */
struct nvgpu_as_alloc_as_ex {
  uint32_t flags;
  int32_t as_fd;
  uint32_t big_page_size, reserved;
  uint64_t va_range_start, va_range_end, va_range_split;
};

/* ---- nvhost-gpu channel ('H') ---- */
#define NVGPU_CH_SET_NVMAP_FD 0x40044801u
#define NVGPU_CH_SUBMIT_GPFIFO_BASE 0xC0004808u /* size bits: 24 + 8 * entries */
#define NVGPU_CH_ALLOC_OBJ_CTX 0xC0104809u
#define NVGPU_CH_SET_ERROR_NOTIFIER 0xC018480Cu
#define NVGPU_CH_SET_PRIORITY 0x4004480Du
#define NVGPU_CH_FORCE_RESET 0x00004811u
#define NVGPU_CH_GET_ERROR_INFO 0x80804816u
#define NVGPU_CH_GET_ERROR_NOTIFICATION 0xC0104817u
#define NVGPU_CH_ALLOC_GPFIFO_EX2 0xC020481Au
#define NVGPU_CH_SUBMIT_GPFIFO2 0xC018481Bu
struct nvgpu_fence {
  uint32_t id, value;
};
struct nvgpu_gpfifo_entry {
  uint32_t entry0, entry1;
};
struct nvgpu_submit_gpfifo {
  uint64_t gpfifo;
  uint32_t num_entries, flags;
  struct nvgpu_fence fence;
};
#define NVGPU_SUBMIT_FENCE_WAIT 0x1u
#define NVGPU_SUBMIT_FENCE_GET 0x2u
#define NVGPU_SUBMIT_HW_FORMAT 0x4u
#define NVGPU_SUBMIT_SUPPRESS_WFI 0x10u
#define NVGPU_SUBMIT_INCR_BY_VALUE 0x100u
struct nvgpu_alloc_obj_ctx {
  uint32_t class_num, flags;
  uint64_t obj_id;
};
struct nvgpu_set_error_notifier {
  uint64_t offset, size;
  uint32_t mem, reserved;
};
struct nvgpu_alloc_gpfifo_ex {
  uint32_t num_entries, num_jobs, flags;
  struct nvgpu_fence fence;
  uint32_t reserved[3];
};
struct nvgpu_error_notification {
  uint64_t timestamp;
  uint32_t info32;
  uint16_t info16, status;
};
/* GET_ERROR_INFO: word 0 the error kind (1 MMU fault, 2 graphics, 3 PBDMA), the rest as libnx's
 * NvError info[] (deko3d decodes it: docs/guest-abi.md). */
struct nvgpu_error_info {
  uint32_t type, info[31];
};

/* ---- the client ---- */
enum nvc_via { NVC_VIA_NVDRV, NVC_VIA_DIRECT };

struct nvc {
  enum nvc_via via;
  int nvdrv; /* the /dev/nvdrv fd (NVC_VIA_NVDRV) */
  void* transfer_memory;
};

/* Connects: opens /dev/nvdrv and initializes it with a transfer memory of `tmem_size` bytes
 * (NVC_VIA_NVDRV), or nothing (NVC_VIA_DIRECT). */
int nvc_init(struct nvc* c, enum nvc_via via, uint32_t tmem_size);
/* Opens a device; *fd is its nvdrv fd or Linux fd. */
int nvc_open(struct nvc* c, const char* path, uint32_t* fd);
int nvc_close(struct nvc* c, uint32_t fd);
/* One ioctl on `arg` (in and out, the code's size; for variable codes the size in the code). */
int nvc_ioctl(struct nvc* c, uint32_t fd, uint32_t code, void* arg);
/* Ioctl2 (NVC_VIA_NVDRV only): `arg` plus a second input buffer. */
int nvc_ioctl2(struct nvc* c, uint32_t fd, uint32_t code, void* arg, const void* in2,
               size_t in2_size);
/* QueryEvent (NVC_VIA_NVDRV only): an eventfd in this process. */
int nvc_query_event(struct nvc* c, uint32_t fd, uint32_t event_id, int* event_fd);
/* DumpStatus (NVC_VIA_NVDRV only): the driver logs (and traces) its state. */
int nvc_dump_status(struct nvc* c);
/* "NotSupported", "EINVAL", ... for an error this client returned. */
const char* nvc_strerror(const struct nvc* c, int err);
/* Reports a failed open of `path` (nvc_init's of /dev/nvdrv, or nvc_open's) on stderr as `name`,
 * with what to do: outside nvsentry's sandbox the nodes do not exist (ENOENT), and the program
 * must run under it (`nvsentry run -- ARGV0`); refused by the sandbox's service (EACCES,
 * AccessDenied), nvsentry's own warning says which service grants it. */
void nvc_open_failed(const struct nvc* c, const char* name, const char* argv0, const char* path,
                     int err);

/* ---- the usual sequences (examples/gpu_demo.c spells them out step by step) ---- */
/* An nvmap object over `size` bytes of this process's memory at `cpu` (CREATE, ALLOC), mapped
 * anywhere in address space `as` with alignment `align` (MAP_BUFFER_EX): *handle and *gpu_va. */
int nvc_map_memory(struct nvc* c, uint32_t nvmap, uint32_t as, void* cpu, uint32_t size,
                   uint32_t align, uint32_t* handle, uint64_t* gpu_va);
/* A channel on `as`: open /dev/nvhost-gpu, SET_NVMAP_FD, BIND_CHANNEL, ALLOC_GPFIFO_EX2 with
 * `entries`, ALLOC_OBJ_CTX(3D). On failure *step names the call that failed. */
int nvc_make_channel(struct nvc* c, uint32_t nvmap, uint32_t as, uint32_t entries, uint32_t* ch,
                     const char** step);

/* SUBMIT_GPFIFO of `n` entries with `flags`. *fence goes in (the count flag bit 8 adds) and comes
 * back as {syncpoint, the value the work reaches}. */
int nvc_submit(struct nvc* c, uint32_t ch, const struct nvgpu_gpfifo_entry* entries, uint32_t n,
               uint32_t flags, struct nvgpu_fence* fence);

/* ---- pushbuffers (command words as Switchbrew's GPU page and the GM20B class headers give them)
 * ---- */
struct nvc_push {
  uint32_t* words;
  uint32_t count, capacity;
};
/* A method write of `n` arguments: mode 1 incrementing, 3 non-incrementing, 5 increment-once. */
void nvc_push_method(struct nvc_push* p, uint32_t mode, uint32_t subch, uint32_t method_byte,
                     const uint32_t* args, uint32_t n);
/* An incrementing write of one or more arguments. */
void nvc_push_incr(struct nvc_push* p, uint32_t subch, uint32_t method_byte, uint32_t n, ...);
/* Mode 4: 13 bits of data in the command word itself. */
void nvc_push_inline(struct nvc_push* p, uint32_t subch, uint32_t method_byte, uint32_t data);
/* A GPFIFO entry for `words` words at GPU address `va`. */
struct nvgpu_gpfifo_entry nvc_gpfifo_entry(uint64_t va, uint32_t words);

#ifdef __cplusplus
}
#endif
