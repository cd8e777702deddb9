// What the sandbox knows about the guest as a client of the driver: its service identity and
// firmware (which decide the permission mask and which ioctl codes apply), debug mode, and where
// its traffic is traced. One per sentry; fixed before the guest starts. (Issue 4's policy file
// fills this in; today the command line does.)
#pragma once

#include <cstdint>
#include <string>

#include "abi/firmware.h"

namespace nvsentry::proxy {

class Tracer;

struct GuestConfig {
  std::string service = "nvdrv";
  abi::Firmware firmware = abi::kLatestFirmware;
  uint32_t permission_mask = 0;  // NvDrvPermission bits
  bool debug_mode = false;
  Tracer* tracer = nullptr;  // null: no tracing
};

}  // namespace nvsentry::proxy
