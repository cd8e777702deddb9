// L4T /dev/nvhost-ctrl (L4T r32.7.4 kernel/nvidia include/uapi/linux/nvhost_ioctl.h, the
// NVHOST_IOCTL_CTRL_* ioctls, magic 'H'): syncpoints. The guest ABI's syncpoint events and
// GET_CONFIG have no counterpart here; POLL_FD_* and the waits are the host's ways to learn of a
// threshold.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvhost_ctrl {

constexpr uint32_t kSyncptRead = 0xC0084801;
constexpr uint32_t kSyncptIncr = 0x40044802;
constexpr uint32_t kSyncptWait = 0x400C4803;
constexpr uint32_t kModuleMutex = 0xC0084804;
constexpr uint32_t kSyncptWaitEx = 0xC0104806;
constexpr uint32_t kGetVersion = 0x80044807;
constexpr uint32_t kSyncptReadMax = 0xC0084808;
constexpr uint32_t kSyncptWaitMex = 0xC0204809;
constexpr uint32_t kSyncFenceCreate = 0xC018480B;
constexpr uint32_t kModuleRegRdWr = 0xC020480C;
constexpr uint32_t kGetCharacteristics = 0xC010480E;
constexpr uint32_t kCheckModuleSupport = 0xC008480F;
constexpr uint32_t kPollFdCreate = 0x80084810;
constexpr uint32_t kPollFdTriggerEvent = 0x40104811;

struct SyncptRead {  // READ, READ_MAX
  uint32_t id;
  uint32_t value;
};
struct SyncptIncr {
  uint32_t id;
};
struct SyncptWait {  // _IOW: nothing comes back
  uint32_t id;
  uint32_t thresh;
  int32_t timeout;  // milliseconds; -1 (NVHOST_NO_TIMEOUT) forever
};
struct SyncptWaitEx {
  uint32_t id;
  uint32_t thresh;
  int32_t timeout;
  uint32_t value;  // out: the syncpoint's value
};
struct SyncptWaitMex {
  uint32_t id;
  uint32_t thresh;
  int32_t timeout;
  uint32_t value;
  uint32_t tv_sec;  // out: when the threshold was reached
  uint32_t tv_nsec;
  uint32_t clock_id;
  uint32_t reserved;
};
struct ModuleMutex {
  uint32_t id;
  uint32_t lock;
};
struct GetParam {  // GET_VERSION
  uint32_t value;
};
struct SyncFenceInfo {
  uint32_t id;
  uint32_t thresh;
};
struct SyncFenceCreate {
  uint32_t num_pts;
  int32_t fence_fd;  // out: a sync_file fd
  uint64_t pts;      // user pointer: num_pts SyncFenceInfo
  uint64_t name;     // user pointer: a C string
};
// The guest's MODULE_REGRDWR carries no offsets; the host's points at offsets and values.
struct ModuleRegRdWr {
  uint32_t id;
  uint32_t num_offsets;
  uint32_t block_size;
  uint32_t write;
  uint64_t offsets;  // user pointer: num_offsets u32
  uint64_t values;   // user pointer: num_offsets * block_size / 4 u32
};
struct Characteristics {  // nvhost_characteristics
  uint64_t flags;
  uint32_t num_mlocks;
  uint32_t num_syncpts;
  uint32_t syncpts_base;
  uint32_t syncpts_limit;
  uint32_t num_hw_pts;
  uint32_t padding;
};
struct GetCharacteristics {
  uint64_t nvhost_characteristics_buf_size;  // in: bytes at the address; out: the kernel's size
  uint64_t nvhost_characteristics_buf_addr;
};
struct CheckModuleSupport {
  uint32_t module_id;
  uint32_t value;
};
struct PollFdCreate {
  int32_t fd;  // out: an fd that polls readable when a triggered threshold is reached
  uint32_t padding;
};
struct PollFdTriggerEvent {
  int32_t fd;
  uint32_t id;
  uint32_t thresh;
  uint32_t padding;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvhost_ctrl
