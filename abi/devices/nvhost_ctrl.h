// /dev/nvhost-ctrl: syncpoints and syncpoint events (Switchbrew).
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvhost_ctrl {

constexpr uint32_t kSyncptRead = 0xC0080014;
constexpr uint32_t kSyncptIncr = 0x40040015;
constexpr uint32_t kSyncptWait = 0xC00C0016;
constexpr uint32_t kModuleMutex = 0x40080017;
constexpr uint32_t kModuleRegRdWr = 0xC0180018;
constexpr uint32_t kSyncptWaitEx = 0xC0100019;
constexpr uint32_t kSyncptReadMax = 0xC008001A;
constexpr uint32_t kGetConfig = 0xC183001B;
constexpr uint32_t kSyncptClearEventWait = 0xC004001C;
constexpr uint32_t kSyncptWaitEvent = 0xC010001D;
constexpr uint32_t kSyncptWaitEventEx = 0xC010001E;
constexpr uint32_t kSyncptAllocEvent = 0xC004001F;
constexpr uint32_t kSyncptFreeEvent = 0xC0040020;
constexpr uint32_t kSyncptFreeEventBatch = 0x40080021;
constexpr uint32_t kSyncptGetShift = 0xC0040022;

// Argument structs, as the guest lays them out.
struct SyncptIdValue {
  uint32_t id;
  uint32_t value;
};
struct SyncptIncr {
  uint32_t id;
};
struct SyncptWait {
  uint32_t id;
  uint32_t thresh;
  int32_t timeout;  // milliseconds; negative waits forever
};
struct SyncptWaitEx {
  uint32_t id;
  uint32_t thresh;
  int32_t timeout;
  uint32_t value;
};
struct ModuleMutex {
  uint32_t id;
  uint32_t lock;  // 0 unlock, 1 lock
};
struct EventSlot {  // CLEAR_EVENT_WAIT, ALLOC_EVENT, FREE_EVENT
  uint32_t event_slot;
};
struct EventSlotMask {  // FREE_EVENT_BATCH
  uint64_t event_slot_mask;
};
struct GetShift {
  uint32_t syncpt_shift;
};
struct GetConfig {
  char name[0x41];
  char key[0x41];
  char value[0x101];
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvhost_ctrl
