// The ioctl catalogue: every device node and ioctl the sandbox knows, as data. One description per
// ioctl drives the copy engine (what to read, what to check, what to write back), dispatch,
// tracing, the generated docs and the fuzzer's seeds. Layouts are checked at compile time
// (layout_check.h); the catalogue never changes at run time.
//
// Adding an ioctl (docs/architecture.md, "Adding an ioctl", says why each step):
//  1. The code constant in abi/devices/<device>.h, named k + the public name's last words in
//     CamelCase (NVHOST_IOCTL_CTRL_SYNCPT_INCR is kSyncptIncr; ctest ConstantNames checks it).
//  2. Its argument struct there, as the guest lays it out, citing the header or page it is from.
//  3. Its IoctlDesc row in abi/devices/<device>.cc: code, public name, field table (directions,
//     unions as `alt`, arrays with their count field and limit), flags, firmware range, fixed
//     answer; static_asserts there: TableIsSound, the struct's size, NVS_CHECK_MEMBER per member.
//  4. Its handler in the device's IoctlHandler table (hostshim/sim/<device>.cc), or the code in
//     the device's list of unimplemented ioctls; ctest IoctlTables holds the two together.
//  5. Regenerate docs/ioctls.md (`build/sentry/nvsentry abi docs > docs/ioctls.md`); a policy
//     rule, the trace, `nvsentry abi show` and the fuzzers' seeds follow from the row.
//  6. Tests: the row against the public table (tests/unit/catalogue_*_test.cc, values typed in
//     by hand), the handler (tests/unit/sim_*_test.cc), and a guest that makes the call under the
//     real sentry if it reaches the simulated GPU (tests/integration/outcomes_test.cc sweeps
//     every catalogued code).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "abi/firmware.h"
#include "abi/ioctl_code.h"
#include "abi/nverror.h"

namespace nvsentry::abi {

enum class FieldType : uint8_t { kU8, kU16, kU32, kU64, kS8, kS16, kS32, kS64, kChar, kStruct };

// How a trace prints a scalar field. kAuto: decimal for counts and values, hex for u64.
enum class Fmt : uint8_t { kAuto, kDec, kHex };

struct StructDesc;

// One member of a struct. Fields are listed in offset order; `alt` marks a union member that
// shares the previous field's bytes (e.g. `__in align` / `__out offset`). Dir kNone is padding or
// a reserved word the driver ignores.
struct Field {
  std::string_view name;
  uint16_t offset;
  FieldType type;
  uint16_t count;  // elements; >1 for fixed arrays such as char name[0x41]
  Dir dir;         // from the caller's view: kIn is read by the driver, kOut written by it
  const StructDesc* sub = nullptr;  // kStruct: the element layout
  bool alt = false;
  Fmt fmt = Fmt::kAuto;
  constexpr uint32_t elem_size() const;
  constexpr uint32_t extent() const { return offset + elem_size() * count; }
};

// A named layout used as a struct member or as the element of a variable-length array.
struct StructDesc {
  std::string_view name;
  uint32_t size;
  std::span<const Field> fields;
};

constexpr uint32_t FieldTypeSize(FieldType t) {
  switch (t) {
    case FieldType::kU8:
    case FieldType::kS8:
    case FieldType::kChar: return 1;
    case FieldType::kU16:
    case FieldType::kS16: return 2;
    case FieldType::kU32:
    case FieldType::kS32: return 4;
    case FieldType::kU64:
    case FieldType::kS64: return 8;
    case FieldType::kStruct: return 0;
  }
  return 0;
}

constexpr uint32_t Field::elem_size() const {
  return type == FieldType::kStruct ? (sub != nullptr ? sub->size : 0) : FieldTypeSize(type);
}

// Which of a call's buffers an array lives in. kMain: inline after the fixed header in the ioctl's
// own buffer (the code's size covers both). kIn2: the second input buffer of the Ioctl2 service
// command. kOut2: the second output buffer of Ioctl3.
enum class Buffer : uint8_t { kMain, kIn2, kOut2 };

// Where an array's element count comes from.
enum class CountFrom : uint8_t {
  kField,  // a u32 of the fixed header, at offset `count`
  kFixed,  // always `count` elements
  kRest,   // whatever the buffer holds after what precedes it (must be a whole number of elements)
};

// How a call reached the driver: a Linux ioctl on a device fd, or one of the /dev/nvdrv service
// commands Ioctl, Ioctl2 (extra input buffer), Ioctl3 (extra output buffer).
enum class Via : uint8_t { kDirect, kIoctl, kIoctl2, kIoctl3 };

struct ArrayDesc {
  std::string_view name;
  const StructDesc* elem;
  Dir dir;
  Buffer buffer;
  CountFrom count_from;
  uint16_t count;      // kField: the header offset of the count; kFixed: the count
  uint32_t max_count;  // default limit, far above what real clients use; policy may lower it
};

// Where the element count of a user pointer's memory comes from (UserPtrDesc).
enum class PtrCount : uint8_t {
  kElements,  // the u32/u64 field at `count` holds the number of elements
  kBytes,     // the u32/u64 field at `count` holds the memory's size in bytes; the driver touches
              // min(that, max_count elements) and writes back its own size there
  kStrided,   // nvmap READ/WRITE: `count` atoms of `elem_size_at` bytes, `stride_at` bytes apart
  kImplied,   // no field: the driver knows (e.g. one entry per SM); at most `max_count` elements
};

// An argument member that holds the address of memory in the caller (a "user pointer", the host
// ABI's way to pass arrays, where the guest ABI carries them inline or in Ioctl2/3 buffers). The
// member itself is an ordinary u64 field of the table; this says what it points at, so that a
// translation can build the memory and a fake device can read or write it in the caller.
struct UserPtrDesc {
  std::string_view name;   // what the memory holds
  uint16_t ptr;            // offset of the u64 pointer field
  const StructDesc* elem;  // one element's layout
  Dir dir;                 // kIn: the driver reads the memory; kOut: writes it; kInOut: both
  PtrCount count_from;
  uint16_t count = 0;         // kElements, kBytes, kStrided: offset of the count field
  uint32_t max_count = 0;     // elements (kStrided: atoms); kBytes: the most the driver writes;
                              // otherwise a bound for copies, far above real use
  bool nullable = false;      // a null pointer means "none" (the driver skips it)
  uint16_t elem_size_at = 0;  // kStrided: offset of the u32 atom size
  uint16_t stride_at = 0;     // kStrided: offset of the u32 stride in the caller's memory
};

enum IoctlFlags : uint32_t {
  kMayBlock = 1u << 0,  // may park the calling thread (a wait)
  // Changes no driver state: only reads it. The engine then skips the liveness check that must
  // precede a side effect (a gone caller's answer is simply never delivered).
  kPure = 1u << 1,
  // The size bits of the code vary with the call (header plus arrays); `code` holds them as 0.
  kVariable = 1u << 2,
  // Switchbrew gives this ioctl a fixed answer (e.g. "Returns NotSupported"): the engine answers
  // `answer` after validating the call, without the backend.
  kFixedAnswer = 1u << 3,
  kUsesIoctl2 = 1u << 4,  // may arrive through the Ioctl2 service command (has a kIn2 array)
  kUsesIoctl3 = 1u << 5,  // may arrive through the Ioctl3 service command (has a kOut2 array)
  // Switchbrew names the ioctl but gives no layout: `fields` is one opaque byte array.
  kOpaque = 1u << 6,
  // A Timeout answer carries outputs too (the syncpoint event waits name the armed event in
  // `value`): the engine writes them back on Timeout as on Success.
  kOutputsOnTimeout = 1u << 7,
  // The ioctl's third argument is a value, not an address (the host's nvmap FREE takes the handle
  // itself); `fields` is empty and the code's size is 0.
  kArgIsValue = 1u << 8,
};

// A code a public client sends for an ioctl with other direction bits than Switchbrew's (same
// magic, number and size). The driver dispatches on the number (docs/guest-abi.md, "Where
// nvsentry follows real clients over Switchbrew"), so the alias selects Switchbrew's entry and is
// served exactly as it: Switchbrew's direction and fields say what is read and written. Only the
// variants listed here are served; any other direction variant stays an unknown code.
struct CodeAlias {
  uint32_t code;
  std::string_view client;  // who sends it, for docs and `nvsentry abi show`
};

struct IoctlDesc {
  uint32_t code;  // kVariable: size bits are 0
  std::string_view name;
  std::span<const Field> fields;  // the whole struct, or the fixed header of a variable ioctl
  uint32_t flags = 0;
  std::span<const ArrayDesc> arrays = {};
  uint16_t header_size = 0;                 // kVariable only: bytes before the first inline array
  FwRange fw = {};                          // firmware versions that use this code
  NvError answer = NvError::kSuccess;       // kFixedAnswer only
  std::string_view summary = {};            // one line for docs and `nvsentry abi show`
  std::span<const CodeAlias> aliases = {};  // fixed-size ioctls only
  std::span<const UserPtrDesc> user_ptrs = {};  // host ABI only: fields that point at memory
  // The ioctl of this name on the same device that does the same under another number or layout:
  // a policy rule for it governs this one too, unless a rule names this one (policy/policy.h).
  std::string_view follows = {};

  constexpr bool variable() const { return (flags & kVariable) != 0; }
  // Bytes of the fixed part: the code's size, or the header of a variable ioctl.
  constexpr uint32_t fixed_size() const { return variable() ? header_size : IocSize(code); }
  constexpr uint32_t size() const { return IocSize(code); }
  constexpr Dir dir() const { return IocDir(code); }
  constexpr bool may_block() const { return (flags & kMayBlock) != 0; }
  constexpr bool pure() const { return (flags & kPure) != 0; }
  // True when a guest's code selects this ioctl (the size bits are free for variable ones; an
  // alias selects it too).
  constexpr bool Matches(uint32_t guest_code) const {
    if (variable()) return (guest_code & ~kIocSizeMask) == code;
    if (guest_code == code) return true;
    for (const CodeAlias& a : aliases)
      if (a.code == guest_code) return true;
    return false;
  }
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
  kNvdrv,  // the service endpoint (not a device of Switchbrew: the service commands as ioctls)
};

constexpr int kNoPermissionBit = -1;

enum DeviceFlags : uint32_t {
  kNeedsDebugMode = 1u << 0,  // opening answers NotSupported unless debug mode is on (Switchbrew)
};

struct DeviceDesc {
  DeviceId id;
  std::string_view path;              // the node the guest opens
  int permission_bit;                 // NvDrvPermission bit that grants it, or kNoPermissionBit
  std::span<const uint8_t> magics;    // ioctl magics its codes use (drives the trap filter)
  std::span<const IoctlDesc> ioctls;  // every ioctl of Switchbrew, all firmware variants
  uint32_t flags = 0;
  FwRange fw = {};  // firmware versions that have the device
};

std::span<const DeviceDesc> Devices();
const DeviceDesc* FindDeviceByPath(std::string_view path);
const DeviceDesc& Device(DeviceId id);

// The ioctl of `dev` that `code` selects on firmware `fw`, or nullptr.
const IoctlDesc* FindIoctl(const DeviceDesc& dev, uint32_t code, Firmware fw = kLatestFirmware);

// Every ioctl of the catalogue whose name is `name` (all devices and firmware variants).
struct NamedIoctl {
  const DeviceDesc* device;
  const IoctlDesc* ioctl;
};
std::span<const NamedIoctl> AllIoctls();

// Every magic any device uses, deduplicated, ascending.
std::span<const uint8_t> AllMagics();

// True when `path` (normalised, absolute) names something in the NVIDIA device namespace: a
// catalogue node, or a name a host NVIDIA driver uses (nvhost-*, nvmap, nvidia*, nvgpu/...).
bool LooksLikeNvidiaNode(std::string_view path);

}  // namespace nvsentry::abi
