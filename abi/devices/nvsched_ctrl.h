// /dev/nvsched-ctrl: the Switch's own GPU scheduler control (applications, runlists, overruns).
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvsched_ctrl {

constexpr uint32_t kEnable = 0x00000601;
constexpr uint32_t kDisable = 0x00000602;
constexpr uint32_t kAddApplication = 0x40180603;
constexpr uint32_t kUpdateApplication = 0x40180604;
constexpr uint32_t kRemoveApplication = 0x40080605;
constexpr uint32_t kGetId = 0x80080606;
constexpr uint32_t kAddRunlist = 0x80080607;
constexpr uint32_t kUpdateRunlist = 0x40180608;
constexpr uint32_t kLinkRunlist = 0x40100609;
constexpr uint32_t kUnlinkRunlist = 0x4010060A;
constexpr uint32_t kRemoveRunlist = 0x4008060B;
constexpr uint32_t kHasOverrunEvent = 0x8001060C;
constexpr uint32_t kGetNextOverrunEventV1 = 0x8010060D;  // firmware below 3.0.0
constexpr uint32_t kGetNextOverrunEvent = 0x8020060D;    // 3.0.0 and later
constexpr uint32_t kPutConductorFlipFence = 0x400C060E;
constexpr uint32_t kDetachApplication = 0x4008060F;
constexpr uint32_t kSetApplicationMaxDebt = 0x40100610;
constexpr uint32_t kSetRunlistMaxDebt = 0x40100611;
constexpr uint32_t kOverrunEventsEnable = 0x40010612;

// Argument structs, as the guest lays them out.
struct Application {  // ADD_APPLICATION, UPDATE_APPLICATION
  uint64_t application_id;
  uint64_t priority;
  uint64_t timeslice;
};
struct ApplicationId {  // REMOVE_APPLICATION, DETACH_APPLICATION
  uint64_t application_id;
};
struct GetId {
  uint64_t id;
};
struct RunlistId {  // ADD_RUNLIST (out), REMOVE_RUNLIST (in)
  uint64_t runlist_id;
};
struct UpdateRunlist {
  uint64_t runlist_id;
  uint64_t priority;
  uint64_t timeslice;
};
struct RunlistLink {  // LINK_RUNLIST, UNLINK_RUNLIST
  uint64_t runlist_id;
  uint64_t application_id;
};
struct HasOverrunEvent {
  uint8_t has_overrun;
};
struct OverrunEventV1 {
  uint64_t runlist_id;
  uint64_t debt;
};
struct OverrunEvent {
  uint64_t runlist_id;
  uint64_t debt;
  uint64_t unk0;
  uint64_t unk1;
};
struct PutConductorFlipFence {
  uint32_t fence_id;
  uint32_t fence_value;
  uint32_t swap_interval;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvsched_ctrl
