#include "abi/l4t/nvhost_ctrl.h"

#include <cstddef>

#include "abi/l4t/elements.h"
#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvhost_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
constexpr Fmt H = Fmt::kHex;

constexpr Field kReadF[] = {{"id", 0, kU32, 1, I}, {"value", 4, kU32, 1, O}};
constexpr Field kIncrF[] = {{"id", 0, kU32, 1, I}};
constexpr Field kWaitF[] = {
    {"id", 0, kU32, 1, I}, {"thresh", 4, kU32, 1, I}, {"timeout", 8, kS32, 1, I}};
constexpr Field kWaitExF[] = {{"id", 0, kU32, 1, I},
                              {"thresh", 4, kU32, 1, I},
                              {"timeout", 8, kS32, 1, I},
                              {"value", 12, kU32, 1, O}};
constexpr Field kWaitMexF[] = {{"id", 0, kU32, 1, I},        {"thresh", 4, kU32, 1, I},
                               {"timeout", 8, kS32, 1, I},   {"value", 12, kU32, 1, O},
                               {"tv_sec", 16, kU32, 1, O},   {"tv_nsec", 20, kU32, 1, O},
                               {"clock_id", 24, kU32, 1, I}, {"reserved", 28, kU32, 1, N}};
constexpr Field kMutexF[] = {{"id", 0, kU32, 1, I}, {"lock", 4, kU32, 1, I}};
constexpr Field kVersionF[] = {{"value", 0, kU32, 1, O}};
constexpr Field kFenceInfoF[] = {{"id", 0, kU32, 1, I}, {"thresh", 4, kU32, 1, I}};
constexpr StructDesc kFenceInfo{"sync_fence_info", 8, kFenceInfoF};
constexpr Field kFenceCreateF[] = {{"num_pts", 0, kU32, 1, I},
                                   {"fence_fd", 4, kS32, 1, O},
                                   {"pts", 8, kU64, 1, I, nullptr, false, H},
                                   {"name", 16, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kFenceCreateP[] = {
    {"pts", 8, &kFenceInfo, I, PtrCount::kElements, 0, 64},
    // A C string: its length is the string's own (at most 32 bytes are used by the driver).
    {"name", 16, &kCharElem, I, PtrCount::kImplied, 0, 32, true}};
constexpr Field kRegRdWrF[] = {{"id", 0, kU32, 1, I},
                               {"num_offsets", 4, kU32, 1, I},
                               {"block_size", 8, kU32, 1, I},
                               {"write", 12, kU32, 1, I},
                               {"offsets", 16, kU64, 1, I, nullptr, false, H},
                               {"values", 24, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kRegRdWrP[] = {
    {"offsets", 16, &kU32Elem, I, PtrCount::kElements, 4, 1024},
    // num_offsets blocks of block_size bytes: read on write, written on read.
    {"values", 24, &kU32Elem, IO, PtrCount::kImplied, 0, 1u << 16}};
constexpr Field kCharacteristicsF[] = {{"flags", 0, kU64, 1, O, nullptr, false, H},
                                       {"num_mlocks", 8, kU32, 1, O},
                                       {"num_syncpts", 12, kU32, 1, O},
                                       {"syncpts_base", 16, kU32, 1, O},
                                       {"syncpts_limit", 20, kU32, 1, O},
                                       {"num_hw_pts", 24, kU32, 1, O},
                                       {"padding", 28, kU32, 1, N}};
constexpr StructDesc kCharacteristics{"nvhost_characteristics", 32, kCharacteristicsF};
constexpr Field kGetCharF[] = {
    {"nvhost_characteristics_buf_size", 0, kU64, 1, IO},
    {"nvhost_characteristics_buf_addr", 8, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kGetCharP[] = {
    {"characteristics", 8, &kCharacteristics, O, PtrCount::kBytes, 0, 1}};
constexpr Field kModuleSupportF[] = {{"module_id", 0, kU32, 1, I}, {"value", 4, kU32, 1, O}};
constexpr Field kPollCreateF[] = {{"fd", 0, kS32, 1, O}, {"padding", 4, kU32, 1, N}};
constexpr Field kPollTriggerF[] = {{"fd", 0, kS32, 1, I},
                                   {"id", 4, kU32, 1, I},
                                   {"thresh", 8, kU32, 1, I},
                                   {"padding", 12, kU32, 1, N}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kSyncptRead, "NVHOST_IOCTL_CTRL_SYNCPT_READ", kReadF, kPure, "A syncpoint's value."),
    Row(kSyncptIncr, "NVHOST_IOCTL_CTRL_SYNCPT_INCR", kIncrF, 0, "Increments a syncpoint."),
    Row(kSyncptWait, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT", kWaitF, kMayBlock,
        "Blocks until a syncpoint reaches `thresh` or `timeout` ms pass."),
    Row(kModuleMutex, "NVHOST_IOCTL_CTRL_MODULE_MUTEX", kMutexF, kMayBlock,
        "Locks or unlocks a host1x module mutex."),
    Row(kSyncptWaitEx, "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX", kWaitExF, kMayBlock,
        "SYNCPT_WAIT that also returns the syncpoint's value."),
    Row(kGetVersion, "NVHOST_IOCTL_CTRL_GET_VERSION", kVersionF, kPure,
        "The nvhost ioctl interface's version."),
    Row(kSyncptReadMax, "NVHOST_IOCTL_CTRL_SYNCPT_READ_MAX", kReadF, kPure,
        "A syncpoint's max (the value its pending work will reach)."),
    Row(kSyncptWaitMex, "NVHOST_IOCTL_CTRL_SYNCPT_WAITMEX", kWaitMexF, kMayBlock,
        "SYNCPT_WAITEX that also returns when the threshold was reached."),
    Row(kSyncFenceCreate, "NVHOST_IOCTL_CTRL_SYNC_FENCE_CREATE", kFenceCreateF, 0,
        "A sync_file fd for `num_pts` {id, thresh} points read at `pts`.", kFenceCreateP),
    Row(kModuleRegRdWr, "NVHOST_IOCTL_CTRL_MODULE_REGRDWR", kRegRdWrF, 0,
        "Reads or writes module registers at the offsets and values the pointers name.", kRegRdWrP),
    Row(kGetCharacteristics, "NVHOST_IOCTL_CTRL_GET_CHARACTERISTICS", kGetCharF, kPure,
        "Writes min(buf_size, 32) bytes of nvhost_characteristics at buf_addr; returns 32.",
        kGetCharP),
    Row(kCheckModuleSupport, "NVHOST_IOCTL_CTRL_CHECK_MODULE_SUPPORT", kModuleSupportF, kPure,
        "Whether a module is present."),
    Row(kPollFdCreate, "NVHOST_IOCTL_CTRL_POLL_FD_CREATE", kPollCreateF, 0,
        "An fd to poll for syncpoint thresholds armed with POLL_FD_TRIGGER_EVENT."),
    Row(kPollFdTriggerEvent, "NVHOST_IOCTL_CTRL_POLL_FD_TRIGGER_EVENT", kPollTriggerF, 0,
        "Arms a poll fd: readable once syncpoint `id` reaches `thresh`."),
};
static_assert(TableIsSound(kIoctls), "L4T nvhost-ctrl layouts disagree with their codes");
static_assert(sizeof(SyncptRead) == IocSize(kSyncptRead));
static_assert(sizeof(SyncptIncr) == IocSize(kSyncptIncr));
static_assert(sizeof(SyncptWait) == IocSize(kSyncptWait));
static_assert(sizeof(SyncptWaitEx) == IocSize(kSyncptWaitEx));
static_assert(sizeof(SyncptWaitMex) == IocSize(kSyncptWaitMex));
static_assert(sizeof(ModuleMutex) == IocSize(kModuleMutex));
static_assert(sizeof(GetParam) == IocSize(kGetVersion));
static_assert(sizeof(SyncFenceCreate) == IocSize(kSyncFenceCreate));
static_assert(sizeof(ModuleRegRdWr) == IocSize(kModuleRegRdWr));
static_assert(sizeof(Characteristics) == 32);
static_assert(sizeof(GetCharacteristics) == IocSize(kGetCharacteristics));
static_assert(sizeof(CheckModuleSupport) == IocSize(kCheckModuleSupport));
static_assert(sizeof(PollFdCreate) == IocSize(kPollFdCreate));
static_assert(sizeof(PollFdTriggerEvent) == IocSize(kPollFdTriggerEvent));

NVS_CHECK_MEMBER(kReadF, SyncptRead, id);
NVS_CHECK_MEMBER(kReadF, SyncptRead, value);
NVS_CHECK_MEMBER(kWaitF, SyncptWait, timeout);
NVS_CHECK_MEMBER(kWaitExF, SyncptWaitEx, thresh);
NVS_CHECK_MEMBER(kWaitExF, SyncptWaitEx, timeout);
NVS_CHECK_MEMBER(kWaitExF, SyncptWaitEx, value);
NVS_CHECK_MEMBER(kWaitMexF, SyncptWaitMex, value);
NVS_CHECK_MEMBER(kWaitMexF, SyncptWaitMex, tv_sec);
NVS_CHECK_MEMBER(kWaitMexF, SyncptWaitMex, tv_nsec);
NVS_CHECK_MEMBER(kWaitMexF, SyncptWaitMex, clock_id);
NVS_CHECK_MEMBER(kWaitMexF, SyncptWaitMex, reserved);
NVS_CHECK_MEMBER(kMutexF, ModuleMutex, lock);
NVS_CHECK_MEMBER(kFenceCreateF, SyncFenceCreate, num_pts);
NVS_CHECK_MEMBER(kFenceCreateF, SyncFenceCreate, fence_fd);
NVS_CHECK_MEMBER(kFenceCreateF, SyncFenceCreate, pts);
NVS_CHECK_MEMBER(kFenceCreateF, SyncFenceCreate, name);
NVS_CHECK_MEMBER(kRegRdWrF, ModuleRegRdWr, num_offsets);
NVS_CHECK_MEMBER(kRegRdWrF, ModuleRegRdWr, block_size);
NVS_CHECK_MEMBER(kRegRdWrF, ModuleRegRdWr, write);
NVS_CHECK_MEMBER(kRegRdWrF, ModuleRegRdWr, offsets);
NVS_CHECK_MEMBER(kRegRdWrF, ModuleRegRdWr, values);
NVS_CHECK_MEMBER(kCharacteristicsF, Characteristics, num_mlocks);
NVS_CHECK_MEMBER(kCharacteristicsF, Characteristics, num_syncpts);
NVS_CHECK_MEMBER(kCharacteristicsF, Characteristics, syncpts_base);
NVS_CHECK_MEMBER(kCharacteristicsF, Characteristics, syncpts_limit);
NVS_CHECK_MEMBER(kCharacteristicsF, Characteristics, num_hw_pts);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, nvhost_characteristics_buf_size);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, nvhost_characteristics_buf_addr);
NVS_CHECK_MEMBER(kModuleSupportF, CheckModuleSupport, value);
NVS_CHECK_MEMBER(kPollCreateF, PollFdCreate, fd);
NVS_CHECK_MEMBER(kPollTriggerF, PollFdTriggerEvent, id);
NVS_CHECK_MEMBER(kPollTriggerF, PollFdTriggerEvent, thresh);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvhost_ctrl
