// The pure parts of the nvhost-ctrl-gpu translation (ctrl_gpu_session.cc): guest arguments to the
// L4T r32.7 layouts (abi/l4t/nvgpu_ctrl.h) and the host's answers back into the guest's
// (abi/devices/nvhost_ctrl_gpu.h). No I/O: the session makes the host calls.
#pragma once

#include <cstdint>
#include <span>

#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim::host {

// The characteristics flags the guest sees: nvgpu.h's HAS_SYNCPOINTS (bit 0) and
// SUPPORT_SPARSE_ALLOCS (bit 2), the features the translation carries. The host's other bits name
// calls it refuses (cycle stats) or layouts it never passes on (sync fence fds).
inline constexpr uint64_t kGuestCharacteristicsFlags = (1u << 0) | (1u << 2);

// The guest's 0xA0 bytes from the host's 256: the first 56 bytes are the same members, the rest
// moves (gpc_mask before flags, gpu_va_bit_count widened, chipname a u64).
abi::nvhost_ctrl_gpu::GpuCharacteristics CharacteristicsToGuest(
    const abi::l4t::nvgpu_ctrl::GpuCharacteristics& h);

// GET_TPC_MASKS: the guest's inline word holds GPC 0's mask low and GPC 1's high; `masks` is what
// the host wrote (one u32 per GPC).
uint64_t TpcMaskWord(std::span<const uint32_t> masks);

// FLUSH_L2: the simulator's check (something flushed; an invalidate only with an L2 flush), then
// the host's 5-byte argument. BadParameter, and nothing for the host, when the check fails.
abi::NvError FlushL2ToHost(const abi::nvhost_ctrl_gpu::FlushL2& g,
                           abi::l4t::nvgpu_ctrl::FlushL2* h);

// VSMS_MAPPING: the first two SMs of the host's table (one entry per SM) in the guest's four
// bytes; missing SMs read 0.
abi::nvhost_ctrl_gpu::VsmsMapping VsmsToGuest(
    std::span<const abi::l4t::nvgpu_ctrl::VsmsMappingEntry> entries);

}  // namespace nvsentry::hostshim::host
