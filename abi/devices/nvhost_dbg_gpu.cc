#include "abi/devices/nvhost_dbg_gpu.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_dbg_gpu {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;
constexpr NvError kOk = NvError::kSuccess;

// REG_OPS (layout from the nvgpu exec_reg_ops arguments; Switchbrew gives none).
constexpr Field kRegOpsHeaderF[] = {{"ops", 0, kU64, 1, N, nullptr, false, H},
                                    {"num_ops", 8, kU32, 1, I},
                                    {"pad", 12, kU32, 1, N}};
constexpr Field kRegOpF[] = {{"op", 0, kU8, 1, I},
                             {"type", 1, kU8, 1, I},
                             {"status", 2, kU8, 1, O, nullptr, false, H},
                             {"quad", 3, kU8, 1, I},
                             {"group_mask", 4, kU32, 1, I, nullptr, false, H},
                             {"sub_group_mask", 8, kU32, 1, I, nullptr, false, H},
                             {"offset", 12, kU32, 1, I, nullptr, false, H},
                             {"value_lo", 16, kU32, 1, IO, nullptr, false, H},
                             {"value_hi", 20, kU32, 1, IO, nullptr, false, H},
                             {"and_n_mask_lo", 24, kU32, 1, I, nullptr, false, H},
                             {"and_n_mask_hi", 28, kU32, 1, I, nullptr, false, H}};
constexpr StructDesc kRegOp{"reg_op", 32, kRegOpF};
constexpr ArrayDesc kRegOpsA[] = {{"ops", &kRegOp, IO, Buffer::kMain, CountFrom::kField, 8, 4096}};

// Elements of the second (Ioctl2/Ioctl3) buffers; Switchbrew names no element type.
constexpr Field kByteOutF[] = {{"value", 0, kU8, 1, O, nullptr, false, H}};
constexpr Field kByteInF[] = {{"value", 0, kU8, 1, I, nullptr, false, H}};
constexpr Field kWordOutF[] = {{"value", 0, kU32, 1, O, nullptr, false, H}};
constexpr StructDesc kByteOut{"u8", 1, kByteOutF};
constexpr StructDesc kByteIn{"u8", 1, kByteInF};
constexpr StructDesc kWordOut{"u32", 4, kWordOutF};
constexpr uint32_t kMaxBytes = 1u << 24;
constexpr uint32_t kMaxWords = 1u << 20;
constexpr ArrayDesc kGrContextA[] = {
    {"context", &kByteOut, O, Buffer::kOut2, CountFrom::kRest, 0, kMaxBytes}};
constexpr ArrayDesc kPdesA[] = {{"pdes", &kWordOut, O, Buffer::kOut2, CountFrom::kRest, 0, kMaxWords}};
constexpr ArrayDesc kPtesA[] = {{"ptes", &kWordOut, O, Buffer::kOut2, CountFrom::kRest, 0, kMaxWords}};
constexpr ArrayDesc kReadComptagsA[] = {
    {"comptags", &kByteOut, O, Buffer::kOut2, CountFrom::kRest, 0, kMaxBytes}};
constexpr ArrayDesc kWriteComptagsA[] = {
    {"comptags", &kByteIn, I, Buffer::kIn2, CountFrom::kRest, 0, kMaxBytes}};

// Layouts Switchbrew does not give.
constexpr Field kIn4[] = {{"data", 0, kU8, 4, I}};
constexpr Field kIn8[] = {{"data", 0, kU8, 8, I}};
constexpr Field kOut4[] = {{"data", 0, kU8, 4, O}};
constexpr Field kOut8[] = {{"data", 0, kU8, 8, O}};
constexpr Field kInOut16[] = {{"data", 0, kU8, 16, IO}};
constexpr Field kInOut24[] = {{"data", 0, kU8, 24, IO}};
constexpr Field kInOut32[] = {{"data", 0, kU8, 32, IO}};
constexpr Field kInOut104[] = {{"data", 0, kU8, 104, IO}};
constexpr Field kInOut132[] = {{"data", 0, kU8, 132, IO}};

constexpr FwRange kFrom1100{Fw(11, 0, 0)};

constexpr IoctlDesc kIoctls[] = {
    {kBindChannel, "NVGPU_DBG_GPU_IOCTL_BIND_CHANNEL", kIn8, kOpaque, {}, 0, {}, kOk,
     "Attaches the debugger to a channel."},
    {kRegOps, "NVGPU_DBG_GPU_IOCTL_REG_OPS", kRegOpsHeaderF, kVariable, kRegOpsA, 16, {}, kOk,
     "Runs a batch of GPU register reads and writes (ops follow the header inline)."},
    {kEventsCtrl, "NVGPU_DBG_GPU_IOCTL_EVENTS_CTRL", kIn8, kOpaque, {}, 0, {}, kOk,
     "Controls debugger event delivery."},
    {kPowergate, "NVGPU_DBG_GPU_IOCTL_POWERGATE", kIn4, kOpaque, {}, 0, {}, kOk,
     "Sets the GPU powergating mode for debugging."},
    {kSmpcCtxswMode, "NVGPU_DBG_GPU_IOCTL_SMPC_CTXSW_MODE", kIn4, kOpaque, {}, 0, {}, kOk,
     "Sets whether SM performance counters are context-switched."},
    {kSuspendResumeAllSms, "NVGPU_DBG_GPU_IOCTL_SUSPEND_RESUME_ALL_SMS", kIn4, kOpaque, {}, 0, {},
     kOk, "Suspends or resumes every SM."},
    {kPerfbufMap, "NVGPU_DBG_GPU_IOCTL_PERFBUF_MAP", kInOut24, kOpaque, {}, 0, {}, kOk,
     "Maps a buffer for performance monitor output."},
    {kPerfbufUnmap, "NVGPU_DBG_GPU_IOCTL_PERFBUF_UNMAP", kIn8, kOpaque, {}, 0, {}, kOk,
     "Unmaps the performance monitor buffer."},
    {kPcSampling, "NVGPU_DBG_GPU_IOCTL_PC_SAMPLING", kIn8, kOpaque, {}, 0, {}, kOk,
     "Turns program counter sampling on or off."},
    {kTimeout, "NVGPU_DBG_GPU_IOCTL_TIMEOUT", kIn8, kOpaque, {}, 0, {}, kOk,
     "Enables or disables channel timeouts while debugging."},
    {kGetTimeout, "NVGPU_DBG_GPU_IOCTL_GET_TIMEOUT", kOut8, kOpaque | kPure, {}, 0, {}, kOk,
     "Reports whether channel timeouts are enabled."},
    {kGetGrContextSize, "NVGPU_DBG_GPU_IOCTL_GET_GR_CONTEXT_SIZE", kOut4, kOpaque | kPure, {}, 0,
     {}, kOk, "Reports the size of the graphics context image."},
    {kGetGrContext, "NVGPU_DBG_GPU_IOCTL_GET_GR_CONTEXT", {}, kPure | kUsesIoctl3, kGrContextA, 0,
     {}, kOk, "Copies the graphics context image into the Ioctl3 output buffer."},
    {kAccessFbMemory, "NVGPU_DBG_GPU_IOCTL_ACCESS_FB_MEMORY", kInOut24, kOpaque, {}, 0, {}, kOk,
     "Reads or writes GPU framebuffer memory."},
    {kGetGpuVaRangeNumPdes, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_NUM_PDES", kInOut24,
     kOpaque | kPure, {}, 0, {}, kOk, "Counts the page directory entries of a VA range."},
    {kGetGpuVaRangePdes, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PDES", kInOut16,
     kOpaque | kPure | kUsesIoctl3, kPdesA, 0, {}, kOk,
     "Copies a VA range's page directory entries into the Ioctl3 output buffer."},
    {kGetGpuVaRangeNumPtes, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_NUM_PTES", kInOut24,
     kOpaque | kPure, {}, 0, {}, kOk, "Counts the page table entries of a VA range."},
    {kGetGpuVaRangePtes, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PTES", kInOut16,
     kOpaque | kPure | kUsesIoctl3, kPtesA, 0, {}, kOk,
     "Copies a VA range's page table entries into the Ioctl3 output buffer."},
    {kGetComptagInfo, "NVGPU_DBG_GPU_IOCTL_GET_COMPTAG_INFO", kInOut104, kOpaque | kPure, {}, 0,
     {}, kOk, "Reports compression tag information."},
    {kReadComptags, "NVGPU_DBG_GPU_IOCTL_READ_COMPTAGS", kInOut24, kOpaque | kPure | kUsesIoctl3,
     kReadComptagsA, 0, {}, kOk, "Copies compression tags into the Ioctl3 output buffer."},
    {kWriteComptags, "NVGPU_DBG_GPU_IOCTL_WRITE_COMPTAGS", kInOut24, kOpaque | kUsesIoctl2,
     kWriteComptagsA, 0, {}, kOk, "Writes compression tags taken from the Ioctl2 input buffer."},
    {kReserveComptags, "NVGPU_DBG_GPU_IOCTL_RESERVE_COMPTAGS", kInOut16, kOpaque, {}, 0, {}, kOk,
     "Reserves compression tags."},
    {kFreeReservedComptags, "NVGPU_DBG_GPU_IOCTL_FREE_RESERVED_COMPTAGS", kInOut16, kOpaque, {},
     0, {}, kOk, "Releases reserved compression tags."},
    {kReservePa, "NVGPU_DBG_GPU_IOCTL_RESERVE_PA", kInOut16, kOpaque, {}, 0, {}, kOk,
     "Reserves physical memory."},
    {kFreeReservedPa, "NVGPU_DBG_GPU_IOCTL_FREE_RESERVED_PA", kInOut16, kOpaque, {}, 0, {}, kOk,
     "Releases reserved physical memory."},
    {kLazyAllocReservedPa, "NVGPU_DBG_GPU_IOCTL_LAZY_ALLOC_RESERVED_PA", kInOut24, kOpaque, {}, 0,
     {}, kOk, "Backs reserved physical memory on demand."},
    {kLazyAllocReservedPaEx, "NVGPU_DBG_GPU_IOCTL_LAZY_ALLOC_RESERVED_PA_EX", kInOut32, kOpaque,
     {}, 0, kFrom1100, kOk, "LAZY_ALLOC_RESERVED_PA with extra parameters."},
    {kGetSettings, "NVGPU_DBG_GPU_IOCTL_GET_SETTINGS", kInOut132, kOpaque | kPure, {}, 0,
     kFrom1100, kOk, "Reports debugger settings."},
    {kGetSerialNumber, "NVGPU_DBG_GPU_IOCTL_GET_SERIAL_NUMBER", kInOut24, kOpaque | kPure, {}, 0,
     kFrom1100, kOk, "Reports the GPU serial number."},
    {kGetGpuVaRangePages, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PAGES", kInOut32, kOpaque | kPure,
     {}, 0, kFrom1100, kOk, "Reports the pages of a VA range."},
};
static_assert(TableIsSound(kIoctls), "nvhost-dbg-gpu layouts disagree with their codes");
static_assert(sizeof(RegOpsHeader) == 16);
static_assert(sizeof(RegOp) == 32);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvhost_dbg_gpu
