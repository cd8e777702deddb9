// Which event ids a device has for the nvdrv QueryEvent command: data of the guest ABI, one
// answer for every backend (the simulated GPU and the devices it does not implement alike).
#pragma once

#include <cstdint>

#include "abi/catalogue.h"
#include "abi/nverror.h"

namespace nvsentry::abi {

// Success when `device` has event `id`; BadParameter for an id it lacks; NotSupported for a
// device without events.
NvError EventIdVerdict(const DeviceDesc& device, uint32_t id);

// Whether every id of `device` names the same single event (the debugger and profiler).
bool SingleEvent(const DeviceDesc& device);

}  // namespace nvsentry::abi
