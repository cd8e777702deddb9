// L4T /dev/nvhost-as-gpu (L4T r32.7.4 kernel/nvgpu include/uapi/linux/nvgpu.h,
// NVGPU_AS_IOCTL_*, magic 'A'): opening the node makes an address space. Buffers are named by
// dma-buf fd; MAP_BUFFER_EX needs NVGPU_AS_MAP_BUFFER_FLAGS_DIRECT_KIND_CTRL on r32.7.4; there is
// no REMAP (sparse remapping came with later nvgpu releases), MAP_BUFFER_BATCH is the nearest.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvgpu_as {

constexpr uint32_t kBindChannel = 0xC0044101;
constexpr uint32_t kAllocSpace32 = 0xC0184102;  // NVGPU32_AS_IOCTL_ALLOC_SPACE: the guest's code
constexpr uint32_t kFreeSpace = 0xC0104103;
constexpr uint32_t kUnmapBuffer = 0xC0084105;
constexpr uint32_t kAllocSpace = 0xC0184106;
constexpr uint32_t kMapBufferEx = 0xC0284107;
constexpr uint32_t kGetVaRegions = 0xC0104108;
constexpr uint32_t kMapBufferBatch = 0xC020410B;

constexpr uint32_t kMapFixedOffset = 1u << 0, kMapCacheable = 1u << 2,
                   kMapDirectKindCtrl = 1u << 8;  // MAP_BUFFER_EX flags
constexpr int16_t kKindInvalid = -1;              // NV_KIND_INVALID

struct BindChannel {
  uint32_t channel_fd;
};
// ALLOC_SPACE and NVGPU32 ALLOC_SPACE: on LP64 both put the union at 16.
struct AllocSpace {
  uint32_t pages;
  uint32_t page_size;
  uint32_t flags;  // bit 0 fixed offset, bit 1 sparse
  uint32_t padding;
  uint64_t offset_or_align;  // in: align, or the offset when fixed; out: the offset
};
struct FreeSpace {  // r32.7.4 uses only `offset`
  uint64_t offset;
  uint32_t pages;
  uint32_t page_size;
};
struct UnmapBuffer {
  uint64_t offset;
};
// Other order than the guest's: two s16 kinds where the guest has one s32, a dma-buf fd where it
// has an nvmap id, page_size where it has a reserved word.
struct MapBufferEx {
  uint32_t flags;
  int16_t compr_kind;
  int16_t incompr_kind;
  uint32_t dmabuf_fd;
  uint32_t page_size;  // in/out; 0: best fit
  uint64_t buffer_offset;
  uint64_t mapping_size;
  uint64_t offset;  // in: the address when fixed; out: the address
};
struct VaRegion {
  uint64_t offset;
  uint32_t page_size;
  uint32_t reserved;
  uint64_t pages;
};
struct GetVaRegions {
  uint64_t buf_addr;  // VaRegion array
  uint32_t buf_size;  // in: bytes at buf_addr; out: the kernel's size
  uint32_t reserved;
};
struct MapBufferBatch {
  uint64_t unmaps;  // UnmapBuffer array
  uint64_t maps;    // MapBufferEx array
  uint32_t num_unmaps;
  uint32_t num_maps;
  uint64_t reserved;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvgpu_as
