#include "abi/l4t/nvgpu_channel.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvgpu_channel {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kNvmapFdF[] = {{"fd", 0, kU32, 1, I}};
constexpr Field kTimeoutF[] = {{"timeout", 0, kU32, 1, I}};
constexpr Field kTimedoutF[] = {{"value", 0, kU32, 1, O}};
constexpr Field kTimeoutExF[] = {{"timeout", 0, kU32, 1, I},
                                 {"flags", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kAllocGpfifoF[] = {{"num_entries", 0, kU32, 1, I},
                                   {"flags", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kWaitF[] = {{"type", 0, kU32, 1, I},
                            {"timeout", 4, kU32, 1, I},
                            {"dmabuf_fd", 8, kU32, 1, I},
                            {"offset", 12, kU32, 1, I, nullptr, false, H},
                            {"payload", 16, kU32, 1, I, nullptr, false, H},
                            {"padding", 20, kU32, 1, N}};
constexpr Field kFenceF[] = {{"id", 0, kU32, 1, IO}, {"value", 4, kU32, 1, IO}};
constexpr StructDesc kFence{"fence", 8, kFenceF};
constexpr Field kEntryF[] = {{"entry0", 0, kU32, 1, I, nullptr, false, H},
                             {"entry1", 4, kU32, 1, I, nullptr, false, H}};
constexpr StructDesc kEntry{"gpfifo_entry", 8, kEntryF};
constexpr Field kSubmitF[] = {{"gpfifo", 0, kU64, 1, I, nullptr, false, H},
                              {"num_entries", 8, kU32, 1, I},
                              {"flags", 12, kU32, 1, I, nullptr, false, H},
                              {"fence", 16, kStruct, 1, IO, &kFence}};
constexpr UserPtrDesc kSubmitP[] = {{"entries", 0, &kEntry, I, PtrCount::kElements, 8, 1u << 16}};
constexpr Field kAllocObjF[] = {{"class_num", 0, kU32, 1, I, nullptr, false, H},
                                {"flags", 4, kU32, 1, IO, nullptr, false, H},
                                {"obj_id", 8, kU64, 1, O}};
constexpr Field kZcullF[] = {{"gpu_va", 0, kU64, 1, I, nullptr, false, H},
                             {"mode", 8, kU32, 1, I},
                             {"padding", 12, kU32, 1, N}};
constexpr Field kErrNotifierF[] = {{"offset", 0, kU64, 1, I, nullptr, false, H},
                                   {"size", 8, kU64, 1, I, nullptr, false, H},
                                   {"mem", 16, kU32, 1, I},
                                   {"padding", 20, kU32, 1, N}};
constexpr Field kOpenF[] = {{"channel_fd", 0, kS32, 1, O}};
constexpr Field kEventF[] = {{"cmd", 0, kU32, 1, I},
                             {"event_id", 4, kU32, 1, I},
                             {"event_fd", 8, kS32, 1, O},
                             {"padding", 12, kU32, 1, N}};
constexpr Field kWdtF[] = {{"wdt_status", 0, kU32, 1, I, nullptr, false, H},
                           {"timeout_ms", 4, kU32, 1, I}};
constexpr Field kTimesliceF[] = {{"timeslice_us", 0, kU32, 1, I}, {"reserved", 4, kU32, 1, N}};
constexpr Field kPreemptModeF[] = {{"graphics_preempt_mode", 0, kU32, 1, I, nullptr, false, H},
                                   {"compute_preempt_mode", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kAllocGpfifoExF[] = {{"num_entries", 0, kU32, 1, I},
                                     {"num_inflight_jobs", 4, kU32, 1, I},
                                     {"flags", 8, kU32, 1, I, nullptr, false, H},
                                     {"reserved", 12, kU32, 5, N}};
constexpr Field kBoostF[] = {{"boost", 0, kU32, 1, I}, {"padding", 4, kU32, 1, N}};
constexpr Field kUserSyncptF[] = {{"gpu_va", 0, kU64, 1, O, nullptr, false, H},
                                  {"syncpoint_id", 8, kU32, 1, O},
                                  {"syncpoint_max", 12, kU32, 1, O}};
constexpr Field kSetupBindF[] = {{"num_gpfifo_entries", 0, kU32, 1, I},
                                 {"num_inflight_jobs", 4, kU32, 1, I},
                                 {"flags", 8, kU32, 1, I, nullptr, false, H},
                                 {"userd_dmabuf_fd", 12, kS32, 1, I},
                                 {"gpfifo_dmabuf_fd", 16, kS32, 1, I},
                                 {"work_submit_token", 20, kU32, 1, O},
                                 {"userd_dmabuf_offset", 24, kU64, 1, I, nullptr, false, H},
                                 {"gpfifo_dmabuf_offset", 32, kU64, 1, I, nullptr, false, H},
                                 {"reserved", 40, kU32, 9, N},
                                 {"pad", 76, kU32, 1, N}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kSetNvmapFd, "NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD", kNvmapFdF, 0,
        "Names the caller's nvmap fd; r32.7.4 accepts and ignores it."),
    Row(kSetTimeout, "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT", kTimeoutF, 0,
        "The channel's job timeout in ms."),
    Row(kGetTimedout, "NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT", kTimedoutF, kPure,
        "Whether the channel has timed out."),
    Row(kSetTimeoutEx, "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT_EX", kTimeoutExF, 0,
        "SET_TIMEOUT with flags (bit 0: no debug dump)."),
    Row(kAllocGpfifo, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO", kAllocGpfifoF, 0,
        "Allocates the channel's GPFIFO ring (deprecated for SETUP_BIND)."),
    Row(kWait, "NVGPU_IOCTL_CHANNEL_WAIT", kWaitF, kMayBlock,
        "Waits for a notifier or a semaphore value in a dma-buf."),
    Row(kSubmitGpfifo, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO", kSubmitF, 0,
        "Submits num_entries GPFIFO entries read at `gpfifo`; may wait on and return a fence.",
        kSubmitP),
    Row(kAllocObjCtx, "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", kAllocObjF, 0,
        "Binds an engine class (3D, compute, copy, ...) to the channel."),
    Row(kZcullBind, "NVGPU_IOCTL_CHANNEL_ZCULL_BIND", kZcullF, 0,
        "Binds a zcull context buffer at `gpu_va`."),
    Row(kSetErrorNotifier, "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER", kErrNotifierF, 0,
        "Where the channel reports errors: `size` bytes at `offset` of dma-buf `mem`."),
    Row(kOpen, "NVGPU_IOCTL_CHANNEL_OPEN", kOpenF, 0, "Opens another channel; returns its fd."),
    Row(kEnable, "NVGPU_IOCTL_CHANNEL_ENABLE", {}, 0, "Enables the channel."),
    Row(kDisable, "NVGPU_IOCTL_CHANNEL_DISABLE", {}, 0, "Disables the channel."),
    Row(kPreempt, "NVGPU_IOCTL_CHANNEL_PREEMPT", {}, 0, "Preempts the channel."),
    Row(kForceReset, "NVGPU_IOCTL_CHANNEL_FORCE_RESET", {}, 0, "Resets the channel."),
    Row(kEventIdCtrl, "NVGPU_IOCTL_CHANNEL_EVENT_ID_CTRL", kEventF, 0,
        "An event fd for `event_id`; not dispatched on r32.7.4 channels (the TSG's is)."),
    Row(kWdt, "NVGPU_IOCTL_CHANNEL_WDT", kWdtF, 0, "Enables or disables the channel watchdog."),
    Row(kSetTimeslice, "NVGPU_IOCTL_CHANNEL_SET_TIMESLICE", kTimesliceF, 0,
        "The channel's timeslice; not dispatched on r32.7.4 channels (the TSG's is)."),
    Row(kSetPreemptionMode, "NVGPU_IOCTL_CHANNEL_SET_PREEMPTION_MODE", kPreemptModeF, 0,
        "Graphics and compute preemption modes."),
    Row(kAllocGpfifoEx, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX", kAllocGpfifoExF, 0,
        "Allocates the GPFIFO ring with a job count (deprecated for SETUP_BIND)."),
    Row(kSetBoostedCtx, "NVGPU_IOCTL_CHANNEL_SET_BOOSTED_CTX", kBoostF, 0,
        "Boosted execution on or off."),
    Row(kGetUserSyncpoint, "NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT", kUserSyncptF, 0,
        "A syncpoint for user-space submits, with its GPU VA."),
    Row(kSetupBind, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", kSetupBindF, 0,
        "Allocates the GPFIFO (or takes user-mode buffers) and enables the channel."),
};
static_assert(TableIsSound(kIoctls), "L4T nvhost-gpu layouts disagree with their codes");
static_assert(sizeof(U32Arg) == IocSize(kSetNvmapFd));
static_assert(sizeof(SetTimeoutEx) == IocSize(kSetTimeoutEx));
static_assert(sizeof(AllocGpfifo) == IocSize(kAllocGpfifo));
static_assert(sizeof(Wait) == IocSize(kWait));
static_assert(sizeof(SubmitGpfifo) == IocSize(kSubmitGpfifo));
static_assert(sizeof(AllocObjCtx) == IocSize(kAllocObjCtx));
static_assert(sizeof(ZcullBind) == IocSize(kZcullBind));
static_assert(sizeof(SetErrorNotifier) == IocSize(kSetErrorNotifier));
static_assert(sizeof(Open) == IocSize(kOpen));
static_assert(sizeof(EventIdCtrl) == IocSize(kEventIdCtrl));
static_assert(sizeof(Wdt) == IocSize(kWdt));
static_assert(sizeof(Timeslice) == IocSize(kSetTimeslice));
static_assert(sizeof(PreemptionMode) == IocSize(kSetPreemptionMode));
static_assert(sizeof(AllocGpfifoEx) == IocSize(kAllocGpfifoEx));
static_assert(sizeof(BoostedCtx) == IocSize(kSetBoostedCtx));
static_assert(sizeof(GetUserSyncpoint) == IocSize(kGetUserSyncpoint));
static_assert(sizeof(SetupBind) == IocSize(kSetupBind));

NVS_CHECK_MEMBER(kTimeoutExF, SetTimeoutEx, flags);
NVS_CHECK_MEMBER(kWaitF, Wait, dmabuf_fd);
NVS_CHECK_MEMBER(kWaitF, Wait, payload);
NVS_CHECK_MEMBER(kSubmitF, SubmitGpfifo, gpfifo);
NVS_CHECK_MEMBER(kSubmitF, SubmitGpfifo, num_entries);
NVS_CHECK_MEMBER(kSubmitF, SubmitGpfifo, flags);
NVS_CHECK_MEMBER(kSubmitF, SubmitGpfifo, fence);
NVS_CHECK_MEMBER(kAllocObjF, AllocObjCtx, obj_id);
NVS_CHECK_MEMBER(kZcullF, ZcullBind, mode);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, size);
NVS_CHECK_MEMBER(kErrNotifierF, SetErrorNotifier, mem);
NVS_CHECK_MEMBER(kEventF, EventIdCtrl, event_id);
NVS_CHECK_MEMBER(kEventF, EventIdCtrl, event_fd);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, num_inflight_jobs);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, flags);
NVS_CHECK_MEMBER(kAllocGpfifoExF, AllocGpfifoEx, reserved);
NVS_CHECK_MEMBER(kUserSyncptF, GetUserSyncpoint, syncpoint_id);
NVS_CHECK_MEMBER(kUserSyncptF, GetUserSyncpoint, syncpoint_max);
NVS_CHECK_MEMBER(kSetupBindF, SetupBind, userd_dmabuf_fd);
NVS_CHECK_MEMBER(kSetupBindF, SetupBind, work_submit_token);
NVS_CHECK_MEMBER(kSetupBindF, SetupBind, userd_dmabuf_offset);
NVS_CHECK_MEMBER(kSetupBindF, SetupBind, gpfifo_dmabuf_offset);
NVS_CHECK_MEMBER(kSetupBindF, SetupBind, reserved);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvgpu_channel
