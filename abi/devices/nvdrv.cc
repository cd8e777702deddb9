#include "abi/devices/nvdrv.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdrv {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kOpenF[] = {{"path", 0, kChar, kPathMax, I},
                            {"fd", 0x100, kU32, 1, O},
                            {"error", 0x104, kU32, 1, O, nullptr, false, H}};
constexpr Field kIoctlF[] = {{"fd", 0, kU32, 1, I},
                             {"code", 4, kU32, 1, I, nullptr, false, H},
                             {"in", 8, kU64, 1, I},
                             {"in_size", 16, kU64, 1, I, nullptr, false, Fmt::kDec},
                             {"out", 24, kU64, 1, I},
                             {"out_size", 32, kU64, 1, I, nullptr, false, Fmt::kDec},
                             {"error", 40, kU32, 1, O, nullptr, false, H},
                             {"reserved", 44, kU32, 1, N}};
constexpr Field kCloseF[] = {{"fd", 0, kU32, 1, I}, {"error", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kInitF[] = {{"transfer_memory", 0, kU64, 1, I},
                            {"size", 8, kU32, 1, I, nullptr, false, H},
                            {"error", 12, kU32, 1, O, nullptr, false, H}};
constexpr Field kQueryF[] = {{"fd", 0, kU32, 1, I},
                             {"event_id", 4, kU32, 1, I, nullptr, false, H},
                             {"flags", 8, kU32, 1, I, nullptr, false, H},
                             {"event_fd", 12, kS32, 1, O},
                             {"error", 16, kU32, 1, O, nullptr, false, H},
                             {"reserved", 20, kU32, 1, N}};
constexpr Field kMapF[] = {{"transfer_memory", 0, kU64, 1, I},
                           {"fd", 8, kU32, 1, I},
                           {"nvmap_handle", 12, kU32, 1, I, nullptr, false, H},
                           {"error", 16, kU32, 1, O, nullptr, false, H},
                           {"reserved", 20, kU32, 1, N}};
constexpr Field kStatusF[] = {{"free_size", 0, kU32, 1, O, nullptr, false, H},
                              {"allocatable_size", 4, kU32, 1, O, nullptr, false, H},
                              {"minimum_free_size", 8, kU32, 1, O, nullptr, false, H},
                              {"minimum_allocatable_size", 12, kU32, 1, O, nullptr, false, H},
                              {"reserved", 16, kU8, 0x10, N}};
constexpr StructDesc kStatus{"NvDrvStatus", 0x20, kStatusF};
constexpr Field kGetStatusF[] = {{"status", 0, kStruct, 1, O, &kStatus},
                                 {"error", 0x20, kU32, 1, O, nullptr, false, H},
                                 {"reserved", 0x24, kU32, 1, N}};
constexpr Field kAruidF[] = {{"aruid", 0, kU64, 1, I},
                             {"error", 8, kU32, 1, O, nullptr, false, H},
                             {"reserved", 12, kU32, 1, N}};
constexpr Field kIoctl2F[] = {{"fd", 0, kU32, 1, I},
                              {"code", 4, kU32, 1, I, nullptr, false, H},
                              {"in", 8, kU64, 1, I},
                              {"in_size", 16, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"in2", 24, kU64, 1, I},
                              {"in2_size", 32, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"out", 40, kU64, 1, I},
                              {"out_size", 48, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"error", 56, kU32, 1, O, nullptr, false, H},
                              {"reserved", 60, kU32, 1, N}};
constexpr Field kIoctl3F[] = {{"fd", 0, kU32, 1, I},
                              {"code", 4, kU32, 1, I, nullptr, false, H},
                              {"in", 8, kU64, 1, I},
                              {"in_size", 16, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"out", 24, kU64, 1, I},
                              {"out_size", 32, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"out2", 40, kU64, 1, I},
                              {"out2_size", 48, kU64, 1, I, nullptr, false, Fmt::kDec},
                              {"error", 56, kU32, 1, O, nullptr, false, H},
                              {"reserved", 60, kU32, 1, N}};
constexpr Field kMarginF[] = {{"value", 0, kU64, 1, I},
                              {"error", 8, kU32, 1, O, nullptr, false, H},
                              {"reserved", 12, kU32, 1, N}};

constexpr FwRange k300{Fw(3, 0, 0)};

// The Ioctl commands are marked pure: they change nothing themselves, and the ioctl they carry
// gets its own liveness check from the engine before any side effect.
constexpr IoctlDesc kIoctls[] = {
    {kOpen,
     "NVDRV_OPEN",
     kOpenF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Opens a device path; returns an nvdrv fd."},
    {kIoctl,
     "NVDRV_IOCTL",
     kIoctlF,
     kPure,
     {},
     0,
     {},
     NvError::kSuccess,
     "Runs a device ioctl on an nvdrv fd with separate input and output buffers."},
    {kClose, "NVDRV_CLOSE", kCloseF, 0, {}, 0, {}, NvError::kSuccess, "Closes an nvdrv fd."},
    {kInitialize,
     "NVDRV_INITIALIZE",
     kInitF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Starts the session; size is the budget for what the driver keeps for the client."},
    {kQueryEvent,
     "NVDRV_QUERY_EVENT",
     kQueryF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Returns an eventfd for an event of a device (syncpoint events, channel errors)."},
    {kMapSharedMem,
     "NVDRV_MAP_SHARED_MEM",
     kMapF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Maps transfer memory over an nvmap handle; answers NotSupported (no layout known)."},
    {kGetStatus,
     "NVDRV_GET_STATUS",
     kGetStatusF,
     kPure,
     {},
     0,
     {},
     NvError::kSuccess,
     "Reports the Initialize budget as NvDrvStatus (free, allocatable, low-water marks)."},
    {kSetAruidWithoutCheck,
     "NVDRV_SET_ARUID_WITHOUT_CHECK",
     kAruidF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Sets the applet resource user id; needs permission bit 10 (NoCheckedAruid)."},
    {kSetAruid,
     "NVDRV_SET_ARUID",
     kAruidF,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Sets the applet resource user id of the calling process."},
    {kDumpStatus,
     "NVDRV_DUMP_STATUS",
     {},
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     "Writes the session's state (fds, budget, aruid) to the sentry log and the trace."},
    {kInitializeDevtools,
     "NVDRV_INITIALIZE_DEVTOOLS",
     kInitF,
     0,
     {},
     0,
     k300,
     NvError::kSuccess,
     "Lends a second transfer memory for developer tools; recorded."},
    {kIoctl2,
     "NVDRV_IOCTL2",
     kIoctl2F,
     kPure,
     {},
     0,
     k300,
     NvError::kSuccess,
     "Ioctl with a second input buffer (e.g. SUBMIT_GPFIFO2's entries).",
     {},
     {},
     "NVDRV_IOCTL"},
    {kIoctl3,
     "NVDRV_IOCTL3",
     kIoctl3F,
     kPure,
     {},
     0,
     k300,
     NvError::kSuccess,
     "Ioctl with a second output buffer (e.g. GET_VA_REGIONS, GET_CHARACTERISTICS).",
     {},
     {},
     "NVDRV_IOCTL"},
    {kSetGraphicsFirmwareMemoryMarginEnabled,
     "NVDRV_SET_GRAPHICS_FIRMWARE_MEMORY_MARGIN_ENABLED",
     kMarginF,
     0,
     {},
     0,
     k300,
     NvError::kSuccess,
     "Sets the graphics firmware memory margin flag; needs permission bit 11."},
};
static_assert(TableIsSound(kIoctls), "/dev/nvdrv layouts disagree with their codes");
static_assert(sizeof(Open) == IocSize(kOpen));
static_assert(sizeof(Ioctl) == IocSize(kIoctl));
static_assert(sizeof(Close) == IocSize(kClose));
static_assert(sizeof(Initialize) == IocSize(kInitialize));
static_assert(sizeof(QueryEvent) == IocSize(kQueryEvent));
static_assert(sizeof(MapSharedMem) == IocSize(kMapSharedMem));
static_assert(sizeof(GetStatus) == IocSize(kGetStatus));
static_assert(sizeof(SetAruid) == IocSize(kSetAruid));
static_assert(sizeof(Ioctl2) == IocSize(kIoctl2));
static_assert(sizeof(Ioctl3) == IocSize(kIoctl3));
static_assert(sizeof(SetGraphicsFirmwareMemoryMarginEnabled) ==
              IocSize(kSetGraphicsFirmwareMemoryMarginEnabled));

NVS_CHECK_MEMBER(kOpenF, Open, path);
NVS_CHECK_MEMBER(kOpenF, Open, fd);
NVS_CHECK_MEMBER(kOpenF, Open, error);
NVS_CHECK_MEMBER(kIoctlF, Ioctl, fd);
NVS_CHECK_MEMBER(kIoctlF, Ioctl, code);
NVS_CHECK_MEMBER(kIoctlF, Ioctl, error);
NVS_CHECK_MEMBER(kIoctlF, Ioctl, reserved);
NVS_CHECK_MEMBER(kCloseF, Close, fd);
NVS_CHECK_MEMBER(kCloseF, Close, error);
NVS_CHECK_MEMBER(kInitF, Initialize, transfer_memory);
NVS_CHECK_MEMBER(kInitF, Initialize, size);
NVS_CHECK_MEMBER(kInitF, Initialize, error);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, fd);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, event_id);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, flags);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, event_fd);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, error);
NVS_CHECK_MEMBER(kQueryF, QueryEvent, reserved);
NVS_CHECK_MEMBER(kMapF, MapSharedMem, transfer_memory);
NVS_CHECK_MEMBER(kMapF, MapSharedMem, fd);
NVS_CHECK_MEMBER(kMapF, MapSharedMem, nvmap_handle);
NVS_CHECK_MEMBER(kMapF, MapSharedMem, error);
NVS_CHECK_MEMBER(kMapF, MapSharedMem, reserved);
NVS_CHECK_MEMBER(kGetStatusF, GetStatus, status);
NVS_CHECK_MEMBER(kGetStatusF, GetStatus, error);
NVS_CHECK_MEMBER(kGetStatusF, GetStatus, reserved);
NVS_CHECK_MEMBER(kAruidF, SetAruid, aruid);
NVS_CHECK_MEMBER(kAruidF, SetAruid, error);
NVS_CHECK_MEMBER(kAruidF, SetAruid, reserved);
NVS_CHECK_MEMBER(kIoctl2F, Ioctl2, fd);
NVS_CHECK_MEMBER(kIoctl2F, Ioctl2, code);
NVS_CHECK_MEMBER(kIoctl2F, Ioctl2, error);
NVS_CHECK_MEMBER(kIoctl2F, Ioctl2, reserved);
NVS_CHECK_MEMBER(kIoctl3F, Ioctl3, fd);
NVS_CHECK_MEMBER(kIoctl3F, Ioctl3, code);
NVS_CHECK_MEMBER(kIoctl3F, Ioctl3, error);
NVS_CHECK_MEMBER(kIoctl3F, Ioctl3, reserved);

}  // namespace

int ErrorOffset(uint32_t code) {
  switch (code) {
    case kOpen: return offsetof(Open, error);
    case kIoctl: return offsetof(Ioctl, error);
    case kClose: return offsetof(Close, error);
    case kInitialize:
    case kInitializeDevtools: return offsetof(Initialize, error);
    case kQueryEvent: return offsetof(QueryEvent, error);
    case kMapSharedMem: return offsetof(MapSharedMem, error);
    case kGetStatus: return offsetof(GetStatus, error);
    case kSetAruid:
    case kSetAruidWithoutCheck: return offsetof(SetAruid, error);
    case kIoctl2: return offsetof(Ioctl2, error);
    case kIoctl3: return offsetof(Ioctl3, error);
    case kSetGraphicsFirmwareMemoryMarginEnabled:
      return offsetof(SetGraphicsFirmwareMemoryMarginEnabled, error);
    default: return -1;
  }
}

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvdrv
