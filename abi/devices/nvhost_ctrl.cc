#include "abi/devices/nvhost_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;

constexpr Field kIdValue[] = {{"id", 0, kU32, 1, I}, {"value", 4, kU32, 1, O}};
constexpr Field kIncr[] = {{"id", 0, kU32, 1, I}};
constexpr Field kWait[] = {
    {"id", 0, kU32, 1, I}, {"thresh", 4, kU32, 1, I}, {"timeout", 8, kS32, 1, I}};
constexpr Field kWaitEx[] = {{"id", 0, kU32, 1, I},
                             {"thresh", 4, kU32, 1, I},
                             {"timeout", 8, kS32, 1, I},
                             {"value", 12, kU32, 1, O}};
constexpr Field kMutex[] = {{"id", 0, kU32, 1, I}, {"lock", 4, kU32, 1, I}};
constexpr Field kRegRdWr[] = {{"id", 0, kU32, 1, I},         {"num_offsets", 4, kU32, 1, I},
                              {"block_size", 8, kU32, 1, I}, {"offsets", 12, kU32, 1, I},
                              {"values", 16, kU32, 1, I},    {"write", 20, kU32, 1, I}};
constexpr Field kConfig[] = {
    {"name", 0, kChar, 0x41, I}, {"key", 0x41, kChar, 0x41, I}, {"value", 0x82, kChar, 0x101, O}};
constexpr Field kSlot[] = {{"event_slot", 0, kU32, 1, I}};
constexpr Field kWaitEvent[] = {{"id", 0, kU32, 1, I},
                                {"thresh", 4, kU32, 1, I},
                                {"timeout", 8, kS32, 1, I},
                                {"value", 12, kU32, 1, O}};
constexpr Field kWaitEventEx[] = {{"id", 0, kU32, 1, I},
                                  {"thresh", 4, kU32, 1, I},
                                  {"timeout", 8, kS32, 1, I},
                                  {"value", 12, kU32, 1, IO}};
constexpr Field kSlotMask[] = {{"event_slot_mask", 0, kU64, 1, I}};
constexpr Field kShift[] = {{"syncpt_shift", 0, kU32, 1, O}};

// libnx's nvioctlNvhostCtrl_SyncptIncr encodes it _NV_IOWR (docs/guest-abi.md).
constexpr CodeAlias kIncrAliases[] = {{0xC0040015, "libnx nvioctlNvhostCtrl_SyncptIncr"}};

constexpr IoctlDesc kIoctls[] = {
    {kSyncptRead, "NVHOST_IOCTL_CTRL_SYNCPT_READ", kIdValue, kPure},
    {kSyncptIncr,
     "NVHOST_IOCTL_CTRL_SYNCPT_INCR",
     kIncr,
     0,
     {},
     0,
     {},
     NvError::kSuccess,
     {},
     kIncrAliases},
    {kSyncptWait, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT", kWait, kMayBlock},
    {kModuleMutex, "NVHOST_IOCTL_CTRL_MODULE_MUTEX", kMutex, 0},
    {kModuleRegRdWr, "NVHOST_IOCTL_CTRL_MODULE_REGRDWR", kRegRdWr, 0},
    {.code = kSyncptWaitEx,
     .name = "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX",
     .fields = kWaitEx,
     .flags = kMayBlock,
     .follows = "NVHOST_IOCTL_CTRL_SYNCPT_WAIT"},
    {kSyncptReadMax, "NVHOST_IOCTL_CTRL_SYNCPT_READ_MAX", kIdValue, kPure},
    {kGetConfig, "NVHOST_IOCTL_CTRL_GET_CONFIG", kConfig, 0},
    {kSyncptClearEventWait, "NVHOST_IOCTL_CTRL_SYNCPT_CLEAR_EVENT_WAIT", kSlot, 0},
    {kSyncptWaitEvent, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT", kWaitEvent,
     kMayBlock | kOutputsOnTimeout},
    {.code = kSyncptWaitEventEx,
     .name = "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT_EX",
     .fields = kWaitEventEx,
     .flags = kMayBlock | kOutputsOnTimeout,
     .follows = "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT"},
    {kSyncptAllocEvent, "NVHOST_IOCTL_CTRL_SYNCPT_ALLOC_EVENT", kSlot, 0},
    {kSyncptFreeEvent, "NVHOST_IOCTL_CTRL_SYNCPT_FREE_EVENT", kSlot, 0},
    {kSyncptFreeEventBatch, "NVHOST_IOCTL_CTRL_SYNCPT_FREE_EVENT_BATCH", kSlotMask, 0},
    {kSyncptGetShift, "NVHOST_IOCTL_CTRL_SYNCPT_GET_SHIFT", kShift, kPure},
};
static_assert(TableIsSound(kIoctls), "nvhost-ctrl layouts disagree with their codes");
static_assert(sizeof(SyncptIdValue) == IocSize(kSyncptRead));
static_assert(sizeof(SyncptIncr) == IocSize(kSyncptIncr));
static_assert(sizeof(SyncptWait) == IocSize(kSyncptWait));
static_assert(sizeof(SyncptWaitEx) == IocSize(kSyncptWaitEx));
static_assert(sizeof(ModuleMutex) == IocSize(kModuleMutex));
static_assert(sizeof(EventSlot) == IocSize(kSyncptAllocEvent));
static_assert(sizeof(EventSlotMask) == IocSize(kSyncptFreeEventBatch));
static_assert(sizeof(GetShift) == IocSize(kSyncptGetShift));
static_assert(sizeof(GetConfig) == IocSize(kGetConfig));
NVS_CHECK_MEMBER(kIdValue, SyncptIdValue, id);
NVS_CHECK_MEMBER(kIdValue, SyncptIdValue, value);
NVS_CHECK_MEMBER(kIncr, SyncptIncr, id);
NVS_CHECK_MEMBER(kWait, SyncptWait, id);
NVS_CHECK_MEMBER(kWait, SyncptWait, thresh);
NVS_CHECK_MEMBER(kWait, SyncptWait, timeout);
NVS_CHECK_MEMBER(kWaitEx, SyncptWaitEx, id);
NVS_CHECK_MEMBER(kWaitEx, SyncptWaitEx, thresh);
NVS_CHECK_MEMBER(kWaitEx, SyncptWaitEx, timeout);
NVS_CHECK_MEMBER(kWaitEx, SyncptWaitEx, value);
NVS_CHECK_MEMBER(kWaitEvent, SyncptWaitEx, value);  // the event waits share WAITEX's layout
NVS_CHECK_MEMBER(kWaitEventEx, SyncptWaitEx, value);
NVS_CHECK_MEMBER(kMutex, ModuleMutex, id);
NVS_CHECK_MEMBER(kMutex, ModuleMutex, lock);
NVS_CHECK_MEMBER(kSlot, EventSlot, event_slot);
NVS_CHECK_MEMBER(kSlotMask, EventSlotMask, event_slot_mask);
NVS_CHECK_MEMBER(kShift, GetShift, syncpt_shift);
NVS_CHECK_MEMBER(kConfig, GetConfig, name);
NVS_CHECK_MEMBER(kConfig, GetConfig, key);
NVS_CHECK_MEMBER(kConfig, GetConfig, value);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvhost_ctrl
