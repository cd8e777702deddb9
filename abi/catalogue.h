// The ioctl catalogue: every device node and ioctl the sandbox knows, as data. One description per
// ioctl drives the copy engine (what to read and write back), validation, dispatch and tracing.
// Layouts are checked at compile time (see layout_check.h); the catalogue never changes at run time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "abi/ioctl_code.h"

namespace nvsentry::abi {

enum class FieldType : uint8_t { kU8, kU16, kU32, kU64, kS16, kS32, kS64, kChar };

constexpr uint32_t FieldTypeSize(FieldType t) {
  switch (t) {
    case FieldType::kU8:
    case FieldType::kChar: return 1;
    case FieldType::kU16:
    case FieldType::kS16: return 2;
    case FieldType::kU32:
    case FieldType::kS32: return 4;
    case FieldType::kU64:
    case FieldType::kS64: return 8;
  }
  return 0;
}

struct Field {
  std::string_view name;
  uint16_t offset;
  FieldType type;
  uint16_t count;  // elements; >1 for fixed arrays such as char name[0x41]
  Dir dir;         // from the caller's view: kIn is read by the driver, kOut written by it
  constexpr uint32_t extent() const { return offset + FieldTypeSize(type) * count; }
};

enum IoctlFlags : uint32_t {
  kMayBlock = 1u << 0,  // may park the calling thread (a wait)
  // Changes no driver state: only reads it. The engine then skips the liveness check that must
  // precede a side effect (a gone caller's answer is simply never delivered).
  kPure = 1u << 1,
};

struct IoctlDesc {
  uint32_t code;
  std::string_view name;
  std::span<const Field> fields;
  uint32_t flags;
  constexpr uint32_t size() const { return IocSize(code); }
  constexpr Dir dir() const { return IocDir(code); }
  constexpr bool may_block() const { return (flags & kMayBlock) != 0; }
  constexpr bool pure() const { return (flags & kPure) != 0; }
};

enum class DeviceId : uint8_t {
  kNvhostCtrl,
  kNvmap,
  kNvdispCtrl,
  kNvdispDisp0,
  kNvdispDisp1,
  kNvcecCtrl,
  kNvhdcpUpCtrl,
  kNvdcutilDisp0,
  kNvdcutilDisp1,
  kNvschedCtrl,
  kNverptCtrl,
  kNvhostAsGpu,
  kNvhostDbgGpu,
  kNvhostProfGpu,
  kNvhostCtrlGpu,
  kNvhostGpu,
  kNvhostMsenc,
  kNvhostNvdec,
  kNvhostNvjpg,
  kNvhostVic,
  kNvhostDisplay,
  kNvhostTsec,
};

constexpr int kNoPermissionBit = -1;

struct DeviceDesc {
  DeviceId id;
  std::string_view path;                // the node the guest opens
  int permission_bit;                   // NvDrvPermission bit that grants it, or kNoPermissionBit
  std::span<const uint8_t> magics;      // ioctl magics its codes use (drives the trap filter)
  std::span<const IoctlDesc> ioctls;    // empty until the device's table is written
};

std::span<const DeviceDesc> Devices();
const DeviceDesc* FindDeviceByPath(std::string_view path);
const DeviceDesc& Device(DeviceId id);

// The ioctl of `dev` whose code equals `code`, or nullptr.
const IoctlDesc* FindIoctl(const DeviceDesc& dev, uint32_t code);

// Every magic any device uses, deduplicated, ascending.
std::span<const uint8_t> AllMagics();

// True when `path` (normalised, absolute) names something in the NVIDIA device namespace: a
// catalogue node, or a name a host NVIDIA driver uses (nvhost-*, nvmap, nvidia*, nvgpu/...).
bool LooksLikeNvidiaNode(std::string_view path);

}  // namespace nvsentry::abi
