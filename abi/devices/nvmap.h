// /dev/nvmap: memory objects (handles) that back GPU buffers, their ids and their export to
// applet resource user ids (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvmap {

constexpr uint32_t kCreate = 0xC0080101;
constexpr uint32_t kClaim = 0x00000102;
constexpr uint32_t kFromId = 0xC0080103;
constexpr uint32_t kAlloc = 0xC0200104;
constexpr uint32_t kFree = 0xC0180105;
constexpr uint32_t kMmap = 0xC0280106;
constexpr uint32_t kWrite = 0xC0280107;
constexpr uint32_t kRead = 0xC0280108;
constexpr uint32_t kParam = 0xC00C0109;
constexpr uint32_t kPinMult = 0xC010010A;
constexpr uint32_t kUnpinMult = 0xC010010B;
constexpr uint32_t kCache = 0xC008010C;
constexpr uint32_t kGetIvcId = 0xC004010D;
constexpr uint32_t kGetId = 0xC008010E;
constexpr uint32_t kFromIvcId = 0xC004010F;
constexpr uint32_t kSetAllocationTagLabel = 0x40040110;
constexpr uint32_t kReserve = 0x00000111;
constexpr uint32_t kExportForAruid = 0x40100112;
constexpr uint32_t kIsOwnedByAruid = 0x40100113;
constexpr uint32_t kRemoveExportForAruid = 0x40100114;

// NVMAP_IOC_PARAM selectors.
enum class Param : uint32_t {
  kSize = 1,
  kAlignment = 2,
  kBase = 3,
  kHeap = 4,
  kKind = 5,
  kCompr = 6
};

struct Create {
  uint32_t size;
  uint32_t handle;
};
struct FromId {
  uint32_t id;
  uint32_t handle;
};
struct Alloc {
  uint32_t handle;
  uint32_t heapmask;
  uint32_t flags;  // bit 0 read-write; bit 1 uncached (reported back by FREE)
  uint32_t align;
  uint8_t kind;
  uint8_t pad[7];
  uint64_t addr;  // guest memory that backs the object
};
struct Free {
  uint32_t handle;
  uint32_t pad;
  uint64_t address;  // 0 while other references keep the object
  uint32_t size;
  uint32_t flags;
};
struct ParamArgs {
  uint32_t handle;
  uint32_t param;
  uint32_t result;
};
struct GetId {
  uint32_t id;  // ~0 on error
  uint32_t handle;
};
struct Aruid {
  uint64_t aruid;
  uint32_t handle;
  uint8_t pad[4];
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvmap
