// The L4T TSG fd (L4T r32.7.4 kernel/nvgpu include/uapi/linux/nvgpu.h, NVGPU_TSG_IOCTL_* and
// NVGPU_IOCTL_TSG_*, magic 'T'): a timeslice group, made by opening /dev/nvhost-tsg-gpu or by
// nvhost-ctrl-gpu's OPEN_TSG. A gm20b channel serves nothing until it is bound to one. On r32.7.4
// the scheduling and event calls the guest ABI makes on a channel (SET_TIMESLICE, the priority,
// EVENT_ID_CONTROL) are served here, for the channels bound to the group.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvgpu_tsg {

constexpr uint32_t kBindChannel = 0x40045401;
constexpr uint32_t kUnbindChannel = 0x40045402;
constexpr uint32_t kEnable = 0x00005403;
constexpr uint32_t kDisable = 0x00005404;
constexpr uint32_t kPreempt = 0x00005405;
constexpr uint32_t kEventIdCtrl = 0xC0105407;
constexpr uint32_t kSetRunlistInterleave = 0x40085408;
constexpr uint32_t kSetTimeslice = 0x40085409;
constexpr uint32_t kGetTimeslice = 0x8008540A;

struct ChannelFd {  // BIND_CHANNEL, UNBIND_CHANNEL: an int
  int32_t channel_fd;
};
struct EventIdCtrl {
  uint32_t cmd;  // 1 enable
  uint32_t event_id;
  int32_t event_fd;  // out
  uint32_t padding;
};
struct RunlistInterleave {
  uint32_t level;  // 0 low, 1 medium, 2 high
  uint32_t reserved;
};
struct Timeslice {
  uint32_t timeslice_us;
  uint32_t reserved;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvgpu_tsg
