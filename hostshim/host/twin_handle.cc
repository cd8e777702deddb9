#include "hostshim/host/twin_handle.h"

#include "hostshim/host/twins.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

abi::NvError NvErrorOfTwinStatus(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return abi::NvError::kSuccess;
    case absl::StatusCode::kDataLoss: return abi::NvError::kInvalidAddress;
    case absl::StatusCode::kFailedPrecondition: return abi::NvError::kBadValue;
    default: return abi::NvError::kInsufficientMemory;
  }
}

abi::NvError TwinHandle(Twins& twins, const std::shared_ptr<sim::NvmapObject>& object,
                        uint32_t* handle) {
  absl::StatusOr<uint32_t> h = twins.HandleOf(object);
  if (h.ok()) {
    *handle = *h;
    return abi::NvError::kSuccess;
  }
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: no host twin for nvmap object {}: {}",
                  object->id(), h.status().ToString());
  return NvErrorOfTwinStatus(h.status());
}

}  // namespace nvsentry::hostshim::host
