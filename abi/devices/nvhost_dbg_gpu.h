// /dev/nvhost-dbg-gpu (and the identical /dev/nvhost-prof-gpu): GPU debugger and profiler
// controls; opening needs debug mode.
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvhost_dbg_gpu {

constexpr uint32_t kBindChannel = 0x40084401;
constexpr uint32_t kRegOps = 0xC0004402;  // variable: header plus the ops
constexpr uint32_t kEventsCtrl = 0x40084403;
constexpr uint32_t kPowergate = 0x40044404;
constexpr uint32_t kSmpcCtxswMode = 0x40044405;
constexpr uint32_t kSuspendResumeAllSms = 0x40044406;
constexpr uint32_t kPerfbufMap = 0xC0184407;
constexpr uint32_t kPerfbufUnmap = 0x40084408;
constexpr uint32_t kPcSampling = 0x40084409;
constexpr uint32_t kTimeout = 0x4008440A;
constexpr uint32_t kGetTimeout = 0x8008440B;
constexpr uint32_t kGetGrContextSize = 0x8004440C;
constexpr uint32_t kGetGrContext = 0x0000440D;
constexpr uint32_t kAccessFbMemory = 0xC018440E;
constexpr uint32_t kGetGpuVaRangeNumPdes = 0xC018440F;
constexpr uint32_t kGetGpuVaRangePdes = 0xC0104410;
constexpr uint32_t kGetGpuVaRangeNumPtes = 0xC0184411;
constexpr uint32_t kGetGpuVaRangePtes = 0xC0104412;
constexpr uint32_t kGetComptagInfo = 0xC0684413;
constexpr uint32_t kReadComptags = 0xC0184414;
constexpr uint32_t kWriteComptags = 0xC0184415;
constexpr uint32_t kReserveComptags = 0xC0104416;
constexpr uint32_t kFreeReservedComptags = 0xC0104417;
constexpr uint32_t kReservePa = 0xC0104418;
constexpr uint32_t kFreeReservedPa = 0xC0104419;
constexpr uint32_t kLazyAllocReservedPa = 0xC018441A;
constexpr uint32_t kLazyAllocReservedPaEx = 0xC020441B;  // 11.0.0+
constexpr uint32_t kGetSettings = 0xC084441C;            // 11.0.0+
constexpr uint32_t kGetSerialNumber = 0xC018441D;        // 11.0.0+
constexpr uint32_t kGetGpuVaRangePages = 0xC020441E;     // 11.0.0+

// REG_OPS: this header, then num_ops RegOp entries in the same buffer. Switchbrew gives no layout;
// these follow the nvgpu exec_reg_ops arguments (the pointer is not used on the Switch).
struct RegOpsHeader {
  uint64_t ops;  // ignored
  uint32_t num_ops;
  uint32_t pad;
};
struct RegOp {
  uint8_t op;
  uint8_t type;
  uint8_t status;
  uint8_t quad;
  uint32_t group_mask;
  uint32_t sub_group_mask;
  uint32_t offset;
  uint32_t value_lo;
  uint32_t value_hi;
  uint32_t and_n_mask_lo;
  uint32_t and_n_mask_hi;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvhost_dbg_gpu
