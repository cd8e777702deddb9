#include "abi/devices/channel.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::channel {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;
constexpr NvError kOk = NvError::kSuccess;

// host1x SUBMIT and SUBMIT_EX.
constexpr Field kSubmitHdrF[] = {{"num_cmdbufs", 0, kU32, 1, I},
                                 {"num_relocs", 4, kU32, 1, I},
                                 {"num_syncpt_incrs", 8, kU32, 1, I},
                                 {"num_fences", 12, kU32, 1, I}};
constexpr Field kCmdbufF[] = {{"mem", 0, kU32, 1, I, nullptr, false, H},
                              {"offset", 4, kU32, 1, I, nullptr, false, H},
                              {"words", 8, kU32, 1, I}};
constexpr Field kRelocF[] = {{"cmdbuf_mem", 0, kU32, 1, I, nullptr, false, H},
                             {"cmdbuf_offset", 4, kU32, 1, I, nullptr, false, H},
                             {"target", 8, kU32, 1, I, nullptr, false, H},
                             {"target_offset", 12, kU32, 1, I, nullptr, false, H}};
constexpr Field kShiftF[] = {{"shift", 0, kU32, 1, I}};
constexpr Field kIncrF[] = {
    {"syncpt_id", 0, kU32, 1, I}, {"syncpt_incrs", 4, kU32, 1, I}, {"reserved", 8, kU32, 3, N}};
constexpr Field kThreshF[] = {{"threshold", 0, kU32, 1, O}};
constexpr StructDesc kCmdbuf{"cmdbuf", 12, kCmdbufF};
constexpr StructDesc kReloc{"reloc", 16, kRelocF};
constexpr StructDesc kShift{"reloc_shift", 4, kShiftF};
constexpr StructDesc kIncr{"syncpt_incr", 20, kIncrF};
constexpr StructDesc kThresh{"fence_threshold", 4, kThreshF};
constexpr ArrayDesc kSubmitA[] = {
    {"cmdbufs", &kCmdbuf, I, Buffer::kMain, CountFrom::kField, 0, kMaxCmdbufs},
    {"relocs", &kReloc, I, Buffer::kMain, CountFrom::kField, 4, kMaxRelocs},
    {"reloc_shifts", &kShift, I, Buffer::kMain, CountFrom::kField, 4, kMaxRelocs},
    {"syncpt_incrs", &kIncr, I, Buffer::kMain, CountFrom::kField, 8, kMaxSyncptIncrs},
    {"fence_thresholds", &kThresh, O, Buffer::kMain, CountFrom::kField, 12, kMaxFences},
};

// MAP/UNMAP_CMD_BUFFER(_EX).
constexpr Field kCmdBufHdrF[] = {{"num_handles", 0, kU32, 1, I},
                                 {"reserved", 4, kU32, 1, N},
                                 {"is_compr", 8, kU8, 1, I},
                                 {"padding", 9, kU8, 3, N}};
constexpr Field kMapHandleF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                                 {"phys_addr", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kUnmapHandleF[] = {{"handle", 0, kU32, 1, I, nullptr, false, H},
                                   {"reserved", 4, kU32, 1, N}};
constexpr StructDesc kMapHandle{"handle", 8, kMapHandleF};
constexpr StructDesc kUnmapHandle{"handle", 8, kUnmapHandleF};
constexpr ArrayDesc kMapA[] = {
    {"handles", &kMapHandle, IO, Buffer::kMain, CountFrom::kField, 0, kMaxCmdBufferHandles}};
constexpr ArrayDesc kUnmapA[] = {
    {"handles", &kUnmapHandle, I, Buffer::kMain, CountFrom::kField, 0, kMaxCmdBufferHandles}};

// SUBMIT_GPFIFO family.
constexpr Field kFenceF[] = {{"id", 0, kU32, 1, IO}, {"value", 4, kU32, 1, IO}};
constexpr StructDesc kFence{"fence", 8, kFenceF};
constexpr Field kFenceOutF[] = {{"id", 0, kU32, 1, O}, {"value", 4, kU32, 1, O}};
constexpr StructDesc kFenceOut{"fence", 8, kFenceOutF};
constexpr Field kGpfifoHdrF[] = {{"gpfifo", 0, kU64, 1, N},
                                 {"num_entries", 8, kU32, 1, I},
                                 {"flags", 12, kU32, 1, I, nullptr, false, H},
                                 {"detailed_error", 12, kU32, 1, O, nullptr, true, H},
                                 {"fence", 16, kStruct, 1, IO, &kFence}};
constexpr Field kEntryF[] = {{"entry0", 0, kU32, 1, I, nullptr, false, H},
                             {"entry1", 4, kU32, 1, I, nullptr, false, H}};
constexpr StructDesc kEntry{"gpfifo_entry", 8, kEntryF};
constexpr ArrayDesc kGpfifoA[] = {
    {"entries", &kEntry, I, Buffer::kMain, CountFrom::kField, 8, kMaxGpfifoEntries}};
constexpr ArrayDesc kGpfifo2A[] = {
    {"entries", &kEntry, I, Buffer::kIn2, CountFrom::kField, 8, kMaxGpfifoEntries}};

constexpr Field kModuleValueF[] = {{"module_id", 0, kU32, 1, I}, {"value", 4, kU32, 1, O}};
constexpr Field kGetModmutexF[] = {{"data", 0, kU8, 8, IO}};
constexpr Field kTimeoutF[] = {{"timeout", 0, kU32, 1, I}};
constexpr Field kSetClkF[] = {{"clk_rate", 0, kU32, 1, I}, {"module_id", 4, kU32, 1, I}};
constexpr Field kGetClkF[] = {{"clk_rate", 0, kU32, 1, O}, {"module_id", 4, kU32, 1, I}};
constexpr Field kNvmapFdF[] = {{"nvmap_fd", 0, kU32, 1, I}};
constexpr Field kAllocGpfifoF[] = {{"num_entries", 0, kU32, 1, I},
                                   {"flags", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kWaitF[] = {{"type", 0, kU32, 1, I},
                            {"timeout", 4, kU32, 1, I},
                            {"dmabuf_fd", 8, kU32, 1, I, nullptr, false, H},
                            {"offset", 12, kU32, 1, I, nullptr, false, H},
                            {"payload", 16, kU32, 1, I, nullptr, false, H},
                            {"padding", 20, kU32, 1, N}};
constexpr Field kCycleStatsF[] = {{"dmabuf_fd", 0, kU32, 1, I, nullptr, false, H}};
constexpr Field kAllocObjF[] = {{"class_num", 0, kU32, 1, I, nullptr, false, H},
                                {"flags", 4, kU32, 1, I, nullptr, false, H},
                                {"obj_id", 8, kU64, 1, O}};
constexpr Field kFreeObjF[] = {{"obj_id", 0, kU64, 1, I}};
constexpr Field kZcullF[] = {
    {"gpu_va", 0, kU64, 1, I}, {"mode", 8, kU32, 1, I}, {"reserved", 12, kU32, 1, N}};
constexpr Field kErrNotifierF[] = {{"offset", 0, kU64, 1, I},
                                   {"size", 8, kU64, 1, I},
                                   {"mem", 16, kU32, 1, I, nullptr, false, H},
                                   {"reserved", 20, kU32, 1, N}};
constexpr Field kPriorityF[] = {{"priority", 0, kU32, 1, I, nullptr, false, H}};
constexpr Field kEventCtlF[] = {{"cmd", 0, kU32, 1, I}, {"id", 4, kU32, 1, I}};
constexpr Field kSnapshotF[] = {{"cmd", 0, kU32, 1, I},
                                {"dmabuf_fd", 4, kU32, 1, I, nullptr, false, H},
                                {"extra", 8, kU32, 1, IO},
                                {"padding", 12, kU32, 1, N}};
constexpr Field kErrorInfoF[] = {{"error_info", 0, kU32, 32, O, nullptr, false, H}};
constexpr Field kErrorNotifF[] = {{"timestamp", 0, kU64, 1, O, nullptr, false, Fmt::kDec},
                                  {"info32", 8, kU32, 1, O, nullptr, false, H},
                                  {"info16", 12, kU16, 1, O, nullptr, false, H},
                                  {"status", 14, kU16, 1, O, nullptr, false, H}};
constexpr Field kAllocGpfifoExF[] = {{"num_entries", 0, kU32, 1, I},
                                     {"num_jobs", 4, kU32, 1, I},
                                     {"flags", 8, kU32, 1, I, nullptr, false, H},
                                     {"fence", 12, kStruct, 1, O, &kFenceOut},
                                     {"reserved", 20, kU32, 3, N}};
constexpr Field kTimesliceF[] = {{"timeslice", 0, kU32, 1, I}};
constexpr Field kSetUserDataF[] = {{"data", 0, kU64, 1, I}};
constexpr Field kGetUserDataF[] = {{"data", 0, kU64, 1, O}};

constexpr FwRange kBefore701{0, Fw(7, 0, 1)};
constexpr FwRange kFrom701{Fw(7, 0, 1)};

constexpr IoctlDesc kIoctls[] = {
    {kSubmit,
     "NVHOST_IOCTL_CHANNEL_SUBMIT",
     kSubmitHdrF,
     kVariable,
     kSubmitA,
     16,
     {},
     kOk,
     "Submits command buffers with relocations and syncpoint increments; returns fence "
     "thresholds."},
    {kGetSyncpoint,
     "NVHOST_IOCTL_CHANNEL_GET_SYNCPOINT",
     kModuleValueF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Returns the syncpoint of a module of the channel."},
    {kGetWaitbase,
     "NVHOST_IOCTL_CHANNEL_GET_WAITBASE",
     kModuleValueF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Returns the waitbase of a module (always 0)."},
    {kGetModmutex,
     "NVHOST_IOCTL_CHANNEL_GET_MODMUTEX",
     kGetModmutexF,
     kOpaque,
     {},
     0,
     {},
     kOk,
     "A stub in the real driver: logs and succeeds; no layout is known."},
    {kSetSubmitTimeout,
     "NVHOST_IOCTL_CHANNEL_SET_SUBMIT_TIMEOUT",
     kTimeoutF,
     0,
     {},
     0,
     {},
     kOk,
     "Sets the channel's submit timeout."},
    {kSetClkRate,
     "NVHOST_IOCTL_CHANNEL_SET_CLK_RATE",
     kSetClkF,
     0,
     {},
     0,
     {},
     kOk,
     "Sets the clock rate of a module."},
    {kMapCmdBuffer,
     "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER",
     kCmdBufHdrF,
     kVariable,
     kMapA,
     12,
     {},
     kOk,
     "Pins nvmap handles for the engine; returns each one's device address."},
    {kUnmapCmdBuffer,
     "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER",
     kCmdBufHdrF,
     kVariable,
     kUnmapA,
     12,
     {},
     kOk,
     "Unpins nvmap handles pinned by MAP_CMD_BUFFER."},
    {kSetTimeoutEx,
     "NVHOST_IOCTL_CHANNEL_SET_TIMEOUT_EX",
     {},
     0,
     {},
     0,
     {},
     kOk,
     "Sets the channel timeout; the code encodes no argument, so nothing is passed."},
    {kGetClkRateV1,
     "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE",
     kGetClkF,
     kPure,
     {},
     0,
     kBefore701,
     kOk,
     "Returns a module's clock rate (number 0x14 before 7.0.1)."},
    {kGetClkRate,
     "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE",
     kGetClkF,
     kPure,
     {},
     0,
     kFrom701,
     kOk,
     "Returns a module's clock rate."},
    {kSubmitEx,
     "NVHOST_IOCTL_CHANNEL_SUBMIT_EX",
     kSubmitHdrF,
     kVariable,
     kSubmitA,
     16,
     {},
     kOk,
     "SUBMIT under another number.",
     {},
     {},
     "NVHOST_IOCTL_CHANNEL_SUBMIT"},
    {kMapCmdBufferEx,
     "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER_EX",
     kCmdBufHdrF,
     kVariable,
     kMapA,
     12,
     {},
     kOk,
     "MAP_CMD_BUFFER that unpins what it pinned when it fails.",
     {},
     {},
     "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER"},
    {kUnmapCmdBufferEx,
     "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER_EX",
     kCmdBufHdrF,
     kVariable,
     kUnmapA,
     12,
     {},
     kOk,
     "UNMAP_CMD_BUFFER under another number.",
     {},
     {},
     "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER"},

    {kSetNvmapFd,
     "NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD",
     kNvmapFdF,
     0,
     {},
     0,
     {},
     kOk,
     "Names the nvmap fd whose handles the channel uses."},
    {kSetTimeout,
     "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT",
     kTimeoutF,
     0,
     {},
     0,
     {},
     kOk,
     "Sets the GPU channel's timeout."},
    {kAllocGpfifo,
     "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO",
     kAllocGpfifoF,
     0,
     {},
     0,
     {},
     kOk,
     "Allocates the channel's GPFIFO ring of num_entries entries."},
    {kWait,
     "NVGPU_IOCTL_CHANNEL_WAIT",
     kWaitF,
     kMayBlock,
     {},
     0,
     {},
     kOk,
     "Waits for a notifier or a semaphore value in an nvmap object."},
    {kCycleStats,
     "NVGPU_IOCTL_CHANNEL_CYCLE_STATS",
     kCycleStatsF,
     0,
     {},
     0,
     {},
     kOk,
     "Attaches the cycle stats buffer (an nvmap handle)."},
    {kSubmitGpfifo,
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO",
     kGpfifoHdrF,
     kVariable,
     kGpfifoA,
     24,
     {},
     kOk,
     "Submits GPFIFO entries that follow the header inline; returns the fence."},
    {kAllocObjCtx,
     "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX",
     kAllocObjF,
     0,
     {},
     0,
     {},
     kOk,
     "Binds an engine class (2D, 3D, compute, DMA...) to the channel; one at a time."},
    {kFreeObjCtx,
     "NVHOST_IOCTL_CHANNEL_FREE_OBJ_CTX",
     kFreeObjF,
     kFixedAnswer,
     {},
     0,
     {},
     NvError::kNotSupported,
     "Answers NotSupported."},
    {kZcullBind,
     "NVGPU_IOCTL_CHANNEL_ZCULL_BIND",
     kZcullF,
     0,
     {},
     0,
     {},
     kOk,
     "Binds a ZCULL context buffer to the channel."},
    {kSetErrorNotifier,
     "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER",
     kErrNotifierF,
     0,
     {},
     0,
     {},
     kOk,
     "Turns the channel's error notifier on (mem != 0) or off."},
    {kSetPriority,
     "NVGPU_IOCTL_CHANNEL_SET_PRIORITY",
     kPriorityF,
     0,
     {},
     0,
     {},
     kOk,
     "Sets the channel priority (0x32 low, 0x64 medium, 0x96 high)."},
    {kEnable, "NVGPU_IOCTL_CHANNEL_ENABLE", {}, 0, {}, 0, {}, kOk, "Enables the channel."},
    {kDisable, "NVGPU_IOCTL_CHANNEL_DISABLE", {}, 0, {}, 0, {}, kOk, "Disables the channel."},
    {kPreempt,
     "NVGPU_IOCTL_CHANNEL_PREEMPT",
     {},
     0,
     {},
     0,
     {},
     kOk,
     "Preempts the channel off the GPU."},
    {kForceReset, "NVGPU_IOCTL_CHANNEL_FORCE_RESET", {}, 0, {}, 0, {}, kOk, "Resets the channel."},
    {kEventIdControl,
     "NVGPU_IOCTL_CHANNEL_EVENT_ID_CONTROL",
     kEventCtlF,
     0,
     {},
     0,
     {},
     kOk,
     "Disables, enables or clears one of the channel's events."},
    {kCycleStatsSnapshot,
     "NVGPU_IOCTL_CHANNEL_CYCLE_STATS_SNAPSHOT",
     kSnapshotF,
     0,
     {},
     0,
     {},
     kOk,
     "Flushes, attaches or detaches the cycle stats snapshot buffer."},
    {kGetErrorInfo,
     "NVGPU_IOCTL_CHANNEL_GET_ERROR_INFO",
     kErrorInfoF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Returns the error the notifier caught (first word: 0 none, 1 MMU, 2 GR, 3 PBDMA, 4 "
     "timeout)."},
    {kGetErrorNotification,
     "NVGPU_IOCTL_CHANNEL_GET_ERROR_NOTIFICATION",
     kErrorNotifF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Returns the notifier's last error with its timestamp."},
    {kAllocGpfifoEx,
     "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX",
     kAllocGpfifoExF,
     0,
     {},
     0,
     {},
     kOk,
     "Allocates the GPFIFO with a job count; the code is in-only, so the fence is never returned.",
     {},
     {},
     "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO"},
    {kSubmitGpfifoRetry,
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_RETRY",
     kGpfifoHdrF,
     kVariable,
     kGpfifoA,
     24,
     {},
     kOk,
     "SUBMIT_GPFIFO under another number.",
     {},
     {},
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO"},
    {kAllocGpfifoEx2,
     "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX2",
     kAllocGpfifoExF,
     0,
     {},
     0,
     {},
     kOk,
     "ALLOC_GPFIFO_EX that returns the fence.",
     {},
     {},
     "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX"},
    {kSubmitGpfifo2,
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO2",
     kGpfifoHdrF,
     kUsesIoctl2,
     kGpfifo2A,
     0,
     {},
     kOk,
     "SUBMIT_GPFIFO with the entries in Ioctl2's second input buffer.",
     {},
     {},
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO"},
    {kSubmitGpfifo2Retry,
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO2_RETRY",
     kGpfifoHdrF,
     kUsesIoctl2,
     kGpfifo2A,
     0,
     {},
     kOk,
     "SUBMIT_GPFIFO_RETRY with the entries in Ioctl2's second input buffer.",
     {},
     {},
     "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_RETRY"},
    {kSetTimeslice,
     "NVGPU_IOCTL_CHANNEL_SET_TIMESLICE",
     kTimesliceF,
     0,
     {},
     0,
     {},
     kOk,
     "Sets the channel's timeslice."},
    {kSetUserData,
     "NVGPU_IOCTL_CHANNEL_SET_USER_DATA",
     kSetUserDataF,
     0,
     {},
     0,
     {},
     kOk,
     "Stores a 64-bit value on the channel."},
    {kGetUserData,
     "NVGPU_IOCTL_CHANNEL_GET_USER_DATA",
     kGetUserDataF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Returns the value SET_USER_DATA stored."},
};
static_assert(TableIsSound(kIoctls), "channel layouts disagree with their codes");
static_assert(sizeof(SubmitHeader) == 16 && sizeof(Cmdbuf) == 12 && sizeof(Reloc) == 16 &&
              sizeof(RelocShift) == 4 && sizeof(SyncptIncr) == 20);
static_assert(sizeof(CmdBufferHeader) == 12 && sizeof(CmdBufferHandle) == 8);
static_assert(sizeof(SubmitGpfifoHeader) == IocSize(kSubmitGpfifo2) && sizeof(GpfifoEntry) == 8);
static_assert(offsetof(SubmitGpfifoHeader, num_entries) == 8);
static_assert(sizeof(IdValue) == IocSize(kGetSyncpoint));
static_assert(sizeof(ClkRate) == IocSize(kSetClkRate));
static_assert(sizeof(GetClkRate) == IocSize(kGetClkRate));
static_assert(sizeof(AllocGpfifo) == IocSize(kAllocGpfifo));
static_assert(sizeof(Wait) == IocSize(kWait));
static_assert(sizeof(AllocObjCtx) == IocSize(kAllocObjCtx));
static_assert(sizeof(FreeObjCtx) == IocSize(kFreeObjCtx));
static_assert(sizeof(ZcullBind) == IocSize(kZcullBind));
static_assert(sizeof(SetErrorNotifier) == IocSize(kSetErrorNotifier));
static_assert(sizeof(EventIdControl) == IocSize(kEventIdControl));
static_assert(sizeof(CycleStatsSnapshot) == IocSize(kCycleStatsSnapshot));
static_assert(sizeof(ErrorInfo) == IocSize(kGetErrorInfo));
static_assert(sizeof(ErrorNotification) == IocSize(kGetErrorNotification));
static_assert(sizeof(AllocGpfifoEx) == IocSize(kAllocGpfifoEx));
static_assert(sizeof(UserData) == IocSize(kSetUserData));

NVS_CHECK_MEMBER(kGpfifoHdrF, SubmitGpfifoHeader, gpfifo);
NVS_CHECK_MEMBER(kGpfifoHdrF, SubmitGpfifoHeader, num_entries);
NVS_CHECK_MEMBER(kGpfifoHdrF, SubmitGpfifoHeader, flags);
NVS_CHECK_MEMBER(kGpfifoHdrF, SubmitGpfifoHeader, fence);
NVS_CHECK_MEMBER(kModuleValueF, IdValue, module_id);
NVS_CHECK_MEMBER(kModuleValueF, IdValue, value);
NVS_CHECK_MEMBER(kSetClkF, ClkRate, clk_rate);
NVS_CHECK_MEMBER(kSetClkF, ClkRate, module_id);
NVS_CHECK_MEMBER(kGetClkF, GetClkRate, clk_rate);
NVS_CHECK_MEMBER(kGetClkF, GetClkRate, module_id);
NVS_CHECK_MEMBER(kAllocGpfifoF, AllocGpfifo, num_entries);
NVS_CHECK_MEMBER(kAllocGpfifoF, AllocGpfifo, flags);
NVS_CHECK_MEMBER(kWaitF, Wait, type);
NVS_CHECK_MEMBER(kWaitF, Wait, timeout);
NVS_CHECK_MEMBER(kWaitF, Wait, dmabuf_fd);
NVS_CHECK_MEMBER(kWaitF, Wait, offset);
NVS_CHECK_MEMBER(kWaitF, Wait, payload);
NVS_CHECK_MEMBER(kWaitF, Wait, padding);
NVS_CHECK_MEMBER(kAllocObjF, AllocObjCtx, class_num);
NVS_CHECK_MEMBER(kAllocObjF, AllocObjCtx, flags);
NVS_CHECK_MEMBER(kAllocObjF, AllocObjCtx, obj_id);
NVS_CHECK_MEMBER(kFreeObjF, FreeObjCtx, obj_id);
NVS_CHECK_MEMBER(kZcullF, ZcullBind, gpu_va);
NVS_CHECK_MEMBER(kZcullF, ZcullBind, mode);
NVS_CHECK_MEMBER(kZcullF, ZcullBind, reserved);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, offset);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, size);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, mem);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, reserved);
NVS_CHECK_MEMBER(kEventCtlF, EventIdControl, cmd);
NVS_CHECK_MEMBER(kEventCtlF, EventIdControl, id);
NVS_CHECK_MEMBER(kSnapshotF, CycleStatsSnapshot, cmd);
NVS_CHECK_MEMBER(kSnapshotF, CycleStatsSnapshot, dmabuf_fd);
NVS_CHECK_MEMBER(kSnapshotF, CycleStatsSnapshot, extra);
NVS_CHECK_MEMBER(kSnapshotF, CycleStatsSnapshot, padding);
NVS_CHECK_MEMBER(kErrorInfoF, ErrorInfo, error_info);
NVS_CHECK_MEMBER(kErrorNotifF, ErrorNotification, timestamp);
NVS_CHECK_MEMBER(kErrorNotifF, ErrorNotification, info32);
NVS_CHECK_MEMBER(kErrorNotifF, ErrorNotification, info16);
NVS_CHECK_MEMBER(kErrorNotifF, ErrorNotification, status);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, num_entries);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, num_jobs);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, flags);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, fence);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, reserved);
NVS_CHECK_MEMBER(kSetUserDataF, UserData, data);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::channel
