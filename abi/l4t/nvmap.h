// L4T /dev/nvmap (L4T r32.7.4 kernel/nvidia include/uapi/linux/nvmap.h, magic 'N'): memory handles
// the host's GPU maps. On r32.7 kernels a handle is a dma-buf fd of the caller (CREATE returns
// one, FREE closes it); the guest ABI's handles are small ids instead. LP64 layouts.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvmap {

constexpr uint32_t kCreate = 0xC0084E00;
constexpr uint32_t kCreate64 = 0xC0084E01;  // u64 size64 in; the handle out in the first 4 bytes
constexpr uint32_t kFromId = 0xC0084E02;    // r32.7.4 answers ENOTTY (deprecated)
constexpr uint32_t kAlloc = 0x40104E03;
constexpr uint32_t kFree = 0x00004E04;  // _IO: the argument is the handle itself
constexpr uint32_t kWrite = 0x40204E06;
constexpr uint32_t kRead = 0x40204E07;
constexpr uint32_t kParam = 0xC0104E08;  // r32.7.4 answers ENOTTY (not dispatched)
constexpr uint32_t kCache = 0x40184E0C;
constexpr uint32_t kGetId = 0xC0084E0D;  // r32.7.4 answers ENOTTY (deprecated)
constexpr uint32_t kGetFd = 0xC0084E0F;
constexpr uint32_t kFromFd = 0xC0084E10;
constexpr uint32_t kSetTagLabel = 0x40104E18;
constexpr uint32_t kParameters = 0x80384E1B;

// nvmap_create_handle as CREATE, FROM_FD, GET_FD, FROM_ID and GET_ID use it (the header's union
// also overlays a u64 ivm_id and size64, which these calls do not use).
struct CreateHandle {
  union {
    uint32_t size;  // CREATE: in
    int32_t fd;     // FROM_FD: in (a dma-buf fd); GET_FD: out (a new dma-buf fd)
    uint32_t id;    // FROM_ID: in; GET_ID: out
  };
  uint32_t handle;  // CREATE, FROM_FD, FROM_ID: out; GET_FD, GET_ID: in
};
struct AllocHandle {
  uint32_t handle;
  uint32_t heap_mask;
  uint32_t flags;  // cache attributes (wb, wc, uc, iwb)
  uint32_t align;
};
// READ/WRITE: `count` atoms of `elem_size` bytes, `hmem_stride` apart in the object and
// `user_stride` apart at `addr` in the caller.
struct RwHandle {
  uint64_t addr;  // unsigned long: a user pointer
  uint32_t handle;
  uint32_t offset;
  uint32_t elem_size;
  uint32_t hmem_stride;
  uint32_t user_stride;
  uint32_t count;
};
struct HandleParam {
  uint32_t handle;
  uint32_t param;   // the guest's Param selectors (1 size ... 6 compr)
  uint64_t result;  // unsigned long
};
// CACHE: maintenance on the caller's mapping of the object at `addr` (not memory the driver
// copies).
struct CacheOp {
  uint64_t addr;
  uint32_t handle;
  uint32_t len;
  int32_t op;  // 0 writeback, 1 invalidate, 2 writeback and invalidate
  uint32_t padding;
};
struct SetTagLabel {
  uint32_t tag;
  uint32_t len;   // in: label length
  uint64_t addr;  // in: the label, or null to remove it
};
// PARAMETERS (_IOR, yet the driver reads `handle`): what PARAM answered one selector at a time.
struct HandleParameters {
  uint8_t contig;
  uint8_t pad0[3];
  uint32_t import_id;
  uint32_t handle;
  uint32_t heap_number;
  uint32_t access_flags;
  uint32_t pad1;
  uint64_t heap;
  uint64_t align;
  uint64_t coherency;
  uint64_t size;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvmap
