// The host handle the translations put where a guest call names nvmap memory (MAP_BUFFER*'s
// dmabuf_fd, SET_ERROR_NOTIFIER's mem): the twin of the guest's object (twins.h), made and filled
// on first use, with its failure as the guest's answer.
#pragma once

#include <cstdint>
#include <memory>

#include "abi/nverror.h"
#include "absl/status/status.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::host {

class Twins;

// The NvError of a twin that could not be made: its guest memory gone (InvalidAddress), no
// memory yet (BadValue, as the simulator answers a map of such an object), or the host refusing
// another object (InsufficientMemory).
abi::NvError NvErrorOfTwinStatus(const absl::Status& s);

// `*handle` = the twin's host handle, or the NvError (logged, rate-limited).
abi::NvError TwinHandle(Twins& twins, const std::shared_ptr<sim::NvmapObject>& object,
                        uint32_t* handle);

}  // namespace nvsentry::hostshim::host
