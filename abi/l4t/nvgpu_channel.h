// L4T /dev/nvhost-gpu (L4T r32.7.4 kernel/nvgpu include/uapi/linux/nvgpu.h,
// NVGPU_IOCTL_CHANNEL_*, magic 'H'; opening the node makes a channel). SET_NVMAP_FD, SET_TIMEOUT,
// SET_TIMEOUT_EX, SET_ERROR_NOTIFIER and OPEN share their codes with nvhost_ioctl.h's channel
// ioctls. r32.7.4's channel node does not dispatch EVENT_ID_CTRL or SET_TIMESLICE although the
// header defines them (ENOTTY): those live on the TSG fd (nvgpu_tsg.h). Fences are syncpoints.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvgpu_channel {

constexpr uint32_t kSetNvmapFd = 0x40044805;  // accepted and ignored by r32.7.4
constexpr uint32_t kSetTimeout = 0x4004480B;
constexpr uint32_t kGetTimedout = 0x8004480C;
constexpr uint32_t kSetTimeoutEx = 0xC0084812;
constexpr uint32_t kAllocGpfifo = 0x40084864;
constexpr uint32_t kWait = 0xC0184866;
constexpr uint32_t kSubmitGpfifo = 0xC018486B;
constexpr uint32_t kAllocObjCtx = 0xC010486C;
constexpr uint32_t kZcullBind = 0xC010486E;
constexpr uint32_t kSetErrorNotifier = 0xC018486F;
constexpr uint32_t kOpen = 0x80044870;
constexpr uint32_t kEnable = 0x00004871;
constexpr uint32_t kDisable = 0x00004872;
constexpr uint32_t kPreempt = 0x00004873;
constexpr uint32_t kForceReset = 0x00004874;
constexpr uint32_t kEventIdCtrl = 0xC0104875;  // defined; r32.7.4's channel answers ENOTTY
constexpr uint32_t kWdt = 0x40084877;
constexpr uint32_t kSetTimeslice = 0x40084879;  // defined; r32.7.4's channel answers ENOTTY
constexpr uint32_t kSetPreemptionMode = 0x4008487A;
constexpr uint32_t kAllocGpfifoEx = 0x4020487B;
constexpr uint32_t kSetBoostedCtx = 0x4008487C;
constexpr uint32_t kGetUserSyncpoint = 0x8010487E;
constexpr uint32_t kSetupBind = 0xC0504880;

struct U32Arg {  // SET_NVMAP_FD, SET_TIMEOUT, GET_TIMEDOUT
  uint32_t value;
};
struct SetTimeoutEx {
  uint32_t timeout;
  uint32_t flags;  // bit 0: no debug dump on timeout
};
struct AllocGpfifo {
  uint32_t num_entries;
  uint32_t flags;
};
struct Wait {     // the notifier/semaphore union, as the semaphore member lays it out
  uint32_t type;  // 0 notifier, 1 semaphore
  uint32_t timeout;
  uint32_t dmabuf_fd;
  uint32_t offset;
  uint32_t payload;
  uint32_t padding;
};
struct Fence {
  uint32_t id;  // syncpoint id (or a sync fence fd with the SYNC_FENCE flag)
  uint32_t value;
};
struct GpfifoEntry {  // also the hardware format
  uint32_t entry0;
  uint32_t entry1;
};
// The guest carries the entries inline after this header; the host reads them at `gpfifo`.
struct SubmitGpfifo {
  uint64_t gpfifo;  // user pointer: num_entries GpfifoEntry
  uint32_t num_entries;
  uint32_t flags;  // NVGPU_SUBMIT_GPFIFO_FLAGS_*: the guest's bits
  Fence fence;     // in with FENCE_WAIT; out with FENCE_GET
};
struct AllocObjCtx {
  uint32_t class_num;
  uint32_t flags;
  uint64_t obj_id;
};
struct ZcullBind {
  uint64_t gpu_va;
  uint32_t mode;
  uint32_t padding;
};
struct SetErrorNotifier {
  uint64_t offset;
  uint64_t size;
  uint32_t mem;  // a dma-buf fd (the guest: an nvmap id); r32.7.4 refuses 0 (no disabling)
  uint32_t padding;
};
struct Open {
  int32_t channel_fd;  // out: a new channel fd (in: runlist_id)
};
struct EventIdCtrl {
  uint32_t cmd;  // 1 enable
  uint32_t event_id;
  int32_t event_fd;  // out: an fd that polls readable on the event
  uint32_t padding;
};
struct Wdt {
  uint32_t wdt_status;
  uint32_t timeout_ms;
};
struct Timeslice {
  uint32_t timeslice_us;
  uint32_t reserved;
};
struct PreemptionMode {
  uint32_t graphics_preempt_mode;
  uint32_t compute_preempt_mode;
};
// The guest's ALLOC_GPFIFO_EX returns a fence in the words that are reserved here.
struct AllocGpfifoEx {
  uint32_t num_entries;
  uint32_t num_inflight_jobs;
  uint32_t flags;
  uint32_t reserved[5];
};
struct BoostedCtx {
  uint32_t boost;
  uint32_t padding;
};
struct GetUserSyncpoint {
  uint64_t gpu_va;
  uint32_t syncpoint_id;
  uint32_t syncpoint_max;
};
struct SetupBind {
  uint32_t num_gpfifo_entries;
  uint32_t num_inflight_jobs;
  uint32_t flags;
  int32_t userd_dmabuf_fd;
  int32_t gpfifo_dmabuf_fd;
  uint32_t work_submit_token;  // out
  uint64_t userd_dmabuf_offset;
  uint64_t gpfifo_dmabuf_offset;
  uint32_t reserved[9];
  uint32_t pad;  // implicit in the header: the size is a multiple of 8
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvgpu_channel
