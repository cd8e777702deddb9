// The channel devices (/dev/nvhost-gpu, -msenc, -nvdec, -nvjpg, -vic, -display, -tsec): one table
// of host1x channel ioctls (magic 0) and nvgpu channel ioctls (magics 'H' and 'G') (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::channel {

// Variable-length ioctls: the size bits (29:16) carry header plus arrays and are 0 here.
constexpr uint32_t kSubmit = 0xC0000001;
constexpr uint32_t kGetSyncpoint = 0xC0080002;
constexpr uint32_t kGetWaitbase = 0xC0080003;
constexpr uint32_t kGetModmutex = 0xC0080004;
constexpr uint32_t kSetSubmitTimeout = 0x40040007;
constexpr uint32_t kSetClkRate = 0x40080008;
constexpr uint32_t kMapCmdBuffer = 0xC0000009;
constexpr uint32_t kUnmapCmdBuffer = 0xC000000A;
constexpr uint32_t kSetTimeoutEx = 0x00000013;
constexpr uint32_t kGetClkRateV1 = 0xC0080014;  // firmware before 7.0.1
constexpr uint32_t kGetClkRate = 0xC0080023;
constexpr uint32_t kSubmitEx = 0xC0000024;
constexpr uint32_t kMapCmdBufferEx = 0xC0000025;
constexpr uint32_t kUnmapCmdBufferEx = 0xC0000026;

constexpr uint32_t kSetNvmapFd = 0x40044801;
constexpr uint32_t kSetTimeout = 0x40044803;
constexpr uint32_t kAllocGpfifo = 0x40084805;
constexpr uint32_t kWait = 0x40184806;
constexpr uint32_t kCycleStats = 0xC0044807;
constexpr uint32_t kSubmitGpfifo = 0xC0004808;
constexpr uint32_t kAllocObjCtx = 0xC0104809;
constexpr uint32_t kFreeObjCtx = 0x4008480A;
constexpr uint32_t kZcullBind = 0xC010480B;
constexpr uint32_t kSetErrorNotifier = 0xC018480C;
constexpr uint32_t kSetPriority = 0x4004480D;
constexpr uint32_t kEnable = 0x0000480E;
constexpr uint32_t kDisable = 0x0000480F;
constexpr uint32_t kPreempt = 0x00004810;
constexpr uint32_t kForceReset = 0x00004811;
constexpr uint32_t kEventIdControl = 0x40084812;
constexpr uint32_t kCycleStatsSnapshot = 0xC0104813;
constexpr uint32_t kGetErrorInfo = 0x80804816;
constexpr uint32_t kGetErrorNotification = 0xC0104817;
constexpr uint32_t kAllocGpfifoEx = 0x40204818;
constexpr uint32_t kSubmitGpfifoRetry = 0xC0004819;
constexpr uint32_t kAllocGpfifoEx2 = 0xC020481A;
constexpr uint32_t kSubmitGpfifo2 = 0xC018481B;
constexpr uint32_t kSubmitGpfifo2Retry = 0xC018481C;
constexpr uint32_t kSetTimeslice = 0xC004481D;
constexpr uint32_t kSetUserData = 0x40084714;
constexpr uint32_t kGetUserData = 0x80084715;

// Default array limits: far above what real clients submit; policy may lower them.
constexpr uint32_t kMaxGpfifoEntries = 1u << 16;
constexpr uint32_t kMaxCmdbufs = 1024;
constexpr uint32_t kMaxRelocs = 4096;
constexpr uint32_t kMaxSyncptIncrs = 256;
constexpr uint32_t kMaxFences = 256;
constexpr uint32_t kMaxCmdBufferHandles = 4096;

// host1x SUBMIT: this header, then cmdbufs, relocs, reloc_shifts, syncpt_incrs (all in) and
// fence_thresholds (out), in that order, inside the ioctl's own buffer.
struct SubmitHeader {
  uint32_t num_cmdbufs;
  uint32_t num_relocs;  // counts both relocs and reloc_shifts
  uint32_t num_syncpt_incrs;
  uint32_t num_fences;
};
struct Cmdbuf {
  uint32_t mem;
  uint32_t offset;
  uint32_t words;
};
struct Reloc {
  uint32_t cmdbuf_mem;
  uint32_t cmdbuf_offset;
  uint32_t target;
  uint32_t target_offset;
};
struct RelocShift {
  uint32_t shift;
};
struct SyncptIncr {
  uint32_t syncpt_id;
  uint32_t syncpt_incrs;
  uint32_t reserved[3];
};

// MAP/UNMAP_CMD_BUFFER(_EX): this header, then num_handles CmdBufferHandle.
struct CmdBufferHeader {
  uint32_t num_handles;
  uint32_t reserved;
  uint8_t is_compr;
  uint8_t padding[3];
};
struct CmdBufferHandle {
  uint32_t handle;
  uint32_t phys_addr;  // MAP: out; UNMAP: reserved
};

struct Fence {
  uint32_t id;
  uint32_t value;
};
struct GpfifoEntry {
  uint32_t entry0;  // iova low
  uint32_t entry1;  // iova high | allow_flush<<8 | is_push_buf<<9 | size<<10 | sync<<31
};
// SUBMIT_GPFIFO(_RETRY): this header, then num_entries GpfifoEntry in the same buffer.
// SUBMIT_GPFIFO2(_RETRY): this header only; the entries come in Ioctl2's second input buffer.
struct SubmitGpfifoHeader {
  uint64_t gpfifo;  // ignored
  uint32_t num_entries;
  uint32_t flags;  // in: flags; out: detailed_error
  Fence fence;
};
// SUBMIT_GPFIFO flag bits.
constexpr uint32_t kFenceWait = 1u << 0, kFenceGet = 1u << 1, kHwFormat = 1u << 2,
                   kSyncFence = 1u << 3, kSuppressWfi = 1u << 4, kSkipBufferRefcounting = 1u << 5;

struct IdValue {  // GET_SYNCPOINT, GET_WAITBASE
  uint32_t module_id;
  uint32_t value;
};
struct ClkRate {  // SET_CLK_RATE
  uint32_t clk_rate;
  uint32_t module_id;
};
struct GetClkRate {
  uint32_t clk_rate;
  uint32_t module_id;
};
struct U32Arg {  // SET_SUBMIT_TIMEOUT, SET_NVMAP_FD, SET_TIMEOUT, CYCLE_STATS, SET_PRIORITY,
                 // SET_TIMESLICE
  uint32_t value;
};
struct AllocGpfifo {
  uint32_t num_entries;
  uint32_t flags;
};
struct Wait {
  uint32_t type;  // 0 notifier, 1 semaphore
  uint32_t timeout;
  uint32_t dmabuf_fd;
  uint32_t offset;
  uint32_t payload;
  uint32_t padding;
};
struct AllocObjCtx {
  uint32_t class_num;
  uint32_t flags;
  uint64_t obj_id;
};
struct FreeObjCtx {
  uint64_t obj_id;
};
struct ZcullBind {
  uint64_t gpu_va;
  uint32_t mode;
  uint32_t reserved;
};
struct SetErrorNotifier {
  uint64_t offset;
  uint64_t size;
  uint32_t mem;  // nonzero enables, zero disables
  uint32_t reserved;
};
struct EventIdControl {
  uint32_t cmd;  // 0 disable, 1 enable, 2 clear
  uint32_t id;
};
struct CycleStatsSnapshot {
  uint32_t cmd;
  uint32_t dmabuf_fd;
  uint32_t extra;
  uint32_t padding;
};
struct ErrorInfo {
  uint32_t error_info[32];
};
struct ErrorNotification {
  uint64_t timestamp;
  uint32_t info32;
  uint16_t info16;
  uint16_t status;
};
struct AllocGpfifoEx {
  uint32_t num_entries;
  uint32_t num_jobs;
  uint32_t flags;
  Fence fence;
  uint32_t reserved[3];
};
struct UserData {
  uint64_t data;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::channel
