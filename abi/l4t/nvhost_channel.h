// The L4T host1x channel nodes (/dev/nvhost-vic, -nvdec, -nvjpg, -msenc, ...; L4T r32.7.4
// kernel/nvidia include/uapi/linux/nvhost_ioctl.h, NVHOST_IOCTL_CHANNEL_*, magic 'H'). The guest
// catalogue's channel table holds these host1x calls for every channel node, /dev/nvhost-gpu
// included; on L4T only the host1x nodes serve them (nvgpu's channel answers ENOTTY, except the
// codes the two share: SET_NVMAP_FD, SET_TIMEOUT, SET_TIMEOUT_EX, SET_ERROR_NOTIFIER, OPEN).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvhost_channel {

constexpr uint32_t kSetNvmapFd = 0x40044805;
constexpr uint32_t kGetClkRate = 0xC0084809;
constexpr uint32_t kSetClkRate = 0x4008480A;
constexpr uint32_t kSetTimeout = 0x4004480B;
constexpr uint32_t kSetPriority = 0x4004480D;  // the guest's SET_PRIORITY code
constexpr uint32_t kGetSyncpoint = 0xC0084810;
constexpr uint32_t kGetWaitbase = 0xC0084811;
constexpr uint32_t kSetTimeoutEx = 0xC0084812;
constexpr uint32_t kGetModmutex = 0xC0084817;
constexpr uint32_t kSubmit = 0xC080481A;
constexpr uint32_t kMapBuffer = 0xC010481C;
constexpr uint32_t kUnmapBuffer = 0xC010481D;

struct GetParamArg {  // GET_SYNCPOINT, GET_WAITBASE, GET_MODMUTEX
  uint32_t param;     // in: the module's index
  uint32_t value;     // out
};
struct ClkRate {
  uint32_t rate;
  uint32_t moduleid;  // bits 15:0 module, 31:24 clock attribute
};
struct U32Arg {  // SET_NVMAP_FD, SET_TIMEOUT, SET_PRIORITY
  uint32_t value;
};
struct SetTimeoutEx {
  uint32_t timeout;
  uint32_t flags;
};
struct Cmdbuf {  // packed in the header; 12 bytes either way
  uint32_t mem;
  uint32_t offset;
  uint32_t words;
};
struct CmdbufExt {
  int32_t pre_fence;
  uint32_t reserved;
};
struct Reloc {
  uint32_t cmdbuf_mem;
  uint32_t cmdbuf_offset;
  uint32_t target;
  uint32_t target_offset;
};
struct RelocType {
  uint32_t reloc_type;
  uint32_t padding;
};
struct Waitchk {
  uint32_t mem;
  uint32_t offset;
  uint32_t syncpt_id;
  uint32_t thresh;
};
struct SyncptIncr {  // 8 bytes; the guest's has three reserved words more (20)
  uint32_t syncpt_id;
  uint32_t syncpt_incrs;
};
// nvhost_submit_args: the counts, then one user pointer per array (the guest: arrays inline).
struct Submit {
  uint32_t submit_version;
  uint32_t num_syncpt_incrs;
  uint32_t num_cmdbufs;
  uint32_t num_relocs;
  uint32_t num_waitchks;
  uint32_t timeout;
  uint32_t flags;
  uint32_t fence;  // out
  uint64_t syncpt_incrs;
  uint64_t cmdbuf_exts;
  uint32_t checksum_methods;
  uint32_t checksum_falcon_methods;
  uint64_t pad;
  uint64_t reloc_types;
  uint64_t cmdbufs;
  uint64_t relocs;
  uint64_t reloc_shifts;
  uint64_t waitchks;
  uint64_t waitbases;  // not read by r32.7.4
  uint64_t class_ids;
  uint64_t fences;
};
struct ChannelBuffer {  // MAP_BUFFER/UNMAP_BUFFER table entries
  uint32_t dmabuf_fd;
  uint32_t reserved0;
  uint64_t reserved1[2];
  uint64_t address;  // MAP: out, the engine's address
};
struct MapBuffer {  // MAP_BUFFER and UNMAP_BUFFER
  uint32_t num_buffers;
  uint32_t reserved;
  uint64_t table_address;  // user pointer: num_buffers ChannelBuffer
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvhost_channel
