// /dev/nvhost-as-gpu: GPU address spaces (one per fd): reserve, map, unmap and remap ranges.
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvhost_as_gpu {

constexpr uint32_t kBindChannel = 0x40044101;
constexpr uint32_t kAllocSpace = 0xC0184102;
constexpr uint32_t kFreeSpace = 0xC0104103;
constexpr uint32_t kMapBuffer = 0xC0184104;
constexpr uint32_t kUnmapBuffer = 0xC0084105;
constexpr uint32_t kMapBufferEx = 0xC0284106;
constexpr uint32_t kAllocAs = 0x40104107;
constexpr uint32_t kGetVaRegions = 0xC0404108;
constexpr uint32_t kAllocAsEx = 0x40284109;
constexpr uint32_t kMapBufferEx2 = 0xC038410A;
constexpr uint32_t kRemap = 0xC0004114;  // variable: the size bits are the entries' bytes

// Argument structs, as the guest lays them out.
struct BindChannel {
  uint32_t channel_fd;
};
struct AllocSpace {
  uint32_t pages;
  uint32_t page_size;
  uint32_t flags;
  uint32_t padding;
  uint64_t offset_or_align;  // in: align; out: offset
};
struct FreeSpace {
  uint64_t offset;
  uint32_t pages;
  uint32_t page_size;
};
struct MapBuffer {
  uint32_t flags;  // bit0 fixed offset, bit2 cacheable
  uint32_t reserved0;
  uint32_t mem_id;  // nvmap handle
  uint32_t reserved1;
  uint64_t offset_or_align;
};
struct UnmapBuffer {
  uint64_t offset;
};
struct MapBufferEx {
  uint32_t flags;
  uint32_t kind;  // -1: default
  uint32_t mem_id;
  uint32_t reserved;
  uint64_t buffer_offset;
  uint64_t mapping_size;
  uint64_t offset_or_align;
};
struct AllocAs {
  uint32_t big_page_size;  // 0: default
  int32_t as_fd;           // ignored
  uint64_t reserved;
};
struct VaRegion {
  uint64_t offset;
  uint32_t page_size;
  uint32_t reserved;
  uint64_t pages;
};
struct GetVaRegions {
  uint64_t buf_addr;  // a user pointer on Linux; ignored
  uint32_t buf_size;
  uint32_t reserved;
  VaRegion regions[2];
};
// The clients' field order (libnx nvioctlNvhostAsGpu_InitializeEx, which passes flags = 1; yuzu's
// IoctlAllocAsEx reads the same); Switchbrew lists big_page_size first (docs/guest-abi.md, "Where
// nvsentry follows real clients over Switchbrew").
struct AllocAsEx {
  uint32_t flags;
  int32_t as_fd;
  uint32_t big_page_size;  // 0: default
  uint32_t reserved;
  uint64_t va_range_start;
  uint64_t va_range_end;
  uint64_t va_range_split;
};
struct MapBufferEx2 {
  uint32_t flags;
  uint32_t kind;
  uint32_t mem_id;
  uint32_t reserved0;
  uint64_t buffer_offset;
  uint64_t mapping_size;
  uint64_t offset_or_align;
  uint64_t vma_addr;
  uint32_t pages;
  uint32_t reserved1;
};
struct RemapOp {   // REMAP's buffer is an array of these
  uint16_t flags;  // bit2 cacheable
  uint16_t kind;
  uint32_t mem_handle;
  uint32_t mem_offset_in_pages;
  uint32_t virt_offset_in_pages;  // ALLOC_SPACE offset >> 16
  uint32_t num_pages;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvhost_as_gpu
