#include "abi/l4t/nvgpu_tsg.h"

#include <cstddef>

#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvgpu_tsg {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, N = Dir::kNone;

constexpr Field kChannelFdF[] = {{"channel_fd", 0, kS32, 1, I}};
constexpr Field kEventF[] = {{"cmd", 0, kU32, 1, I},
                             {"event_id", 4, kU32, 1, I},
                             {"event_fd", 8, kS32, 1, O},
                             {"padding", 12, kU32, 1, N}};
constexpr Field kInterleaveF[] = {{"level", 0, kU32, 1, I}, {"reserved", 4, kU32, 1, N}};
constexpr Field kSetTimesliceF[] = {{"timeslice_us", 0, kU32, 1, I}, {"reserved", 4, kU32, 1, N}};
constexpr Field kGetTimesliceF[] = {{"timeslice_us", 0, kU32, 1, O}, {"reserved", 4, kU32, 1, N}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kBindChannel, "NVGPU_TSG_IOCTL_BIND_CHANNEL", kChannelFdF, 0,
        "Puts a channel in the group."),
    Row(kUnbindChannel, "NVGPU_TSG_IOCTL_UNBIND_CHANNEL", kChannelFdF, 0,
        "Takes a channel out of the group."),
    Row(kEnable, "NVGPU_IOCTL_TSG_ENABLE", {}, 0, "Enables the group's channels."),
    Row(kDisable, "NVGPU_IOCTL_TSG_DISABLE", {}, 0, "Disables the group's channels."),
    Row(kPreempt, "NVGPU_IOCTL_TSG_PREEMPT", {}, 0, "Preempts the group."),
    Row(kEventIdCtrl, "NVGPU_IOCTL_TSG_EVENT_ID_CTRL", kEventF, 0,
        "An fd that polls readable on event `event_id` (e.g. 2, blocking sync)."),
    Row(kSetRunlistInterleave, "NVGPU_IOCTL_TSG_SET_RUNLIST_INTERLEAVE", kInterleaveF, 0,
        "How often the group appears in the runlist (low, medium, high)."),
    Row(kSetTimeslice, "NVGPU_IOCTL_TSG_SET_TIMESLICE", kSetTimesliceF, 0,
        "The group's timeslice in microseconds."),
    Row(kGetTimeslice, "NVGPU_IOCTL_TSG_GET_TIMESLICE", kGetTimesliceF, kPure,
        "The group's timeslice."),
};
static_assert(TableIsSound(kIoctls), "L4T TSG layouts disagree with their codes");
static_assert(sizeof(ChannelFd) == IocSize(kBindChannel));
static_assert(sizeof(EventIdCtrl) == IocSize(kEventIdCtrl));
static_assert(sizeof(RunlistInterleave) == IocSize(kSetRunlistInterleave));
static_assert(sizeof(Timeslice) == IocSize(kSetTimeslice));

NVS_CHECK_MEMBER(kEventF, EventIdCtrl, event_id);
NVS_CHECK_MEMBER(kEventF, EventIdCtrl, event_fd);
NVS_CHECK_MEMBER(kInterleaveF, RunlistInterleave, level);
NVS_CHECK_MEMBER(kSetTimesliceF, Timeslice, timeslice_us);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvgpu_tsg
