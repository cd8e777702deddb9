// What the sandbox knows about the guest as a client of the driver: its policy (service identity
// and firmware, which decide the permission mask and which ioctl codes apply, devices, ioctl
// rules, budgets) and where its traffic is traced. One per sentry; fixed before the guest starts.
// The scalar fields below are the policy's, copied out for the hot paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "absl/container/flat_hash_map.h"
#include "policy/policy.h"

namespace nvsentry::proxy {

class Tracer;

struct GuestConfig {
  policy::Policy policy = policy::DefaultPolicy();
  std::string service = "nvdrv";
  abi::Firmware firmware = abi::kLatestFirmware;
  uint32_t permission_mask = 0;  // NvDrvPermission bits
  bool debug_mode = false;
  Tracer* tracer = nullptr;  // null: no tracing
  // Lowered limits for variable-length arrays: for an ioctl listed here, one maximum count per
  // entry of its `arrays` (the catalogue's max_count for the others). Limits only ever tighten
  // what the catalogue allows; issue 4's policy file fills this in.
  absl::flat_hash_map<const abi::IoctlDesc*, std::vector<uint32_t>> array_limits;
};

}  // namespace nvsentry::proxy
