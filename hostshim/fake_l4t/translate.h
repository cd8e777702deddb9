// The parts of the fake Jetson's L4T <-> guest-ABI translation that have logic of their own, as
// pure functions (unit-tested in tests/unit/hostshim/fake_l4t/fake_l4t_translate_test.cc): layouts
// that differ, flag bits, the strided copies of nvmap READ/WRITE and the errno of an answer.
#pragma once

#include <cstdint>
#include <vector>

#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/l4t/nodes.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvmap.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim::fake_l4t {

// The errno of a code a node does not serve (L4T-NODE-2, -5, -6): on nvhost-ctrl-gpu,
// nvhost-as-gpu and nvhost-gpu, EINVAL when its type is not the node's magic, its number is 0 or
// above the node's last, or its size above the node's largest argument, else ENOTTY; ENOTTY on
// nvhost-ctrl and nvmap.
int UnservedCodeErrno(abi::l4t::L4tNode node, uint32_t code);

// The errno an L4T caller sees for a sim answer: docs/guest-abi.md's table (abi/nverror.h),
// except that a syncpoint wait that times out answers EAGAIN as nvhost_syncpt.c does.
int ErrnoOf(abi::NvError err, bool syncpoint_wait = false);

// The flags a GM20B with syncpoints reports whatever the kernel's configuration (L4T-CTRL-3):
// HAS_SYNCPOINTS, SUPPORT_PARTIAL_MAPPINGS, SUPPORT_SPARSE_ALLOCS,
// SUPPORT_USERSPACE_MANAGED_AS, SUPPORT_TSG, SUPPORT_DETERMINISTIC_SUBMIT_NO_JOBTRACKING,
// SUPPORT_MAP_DIRECT_KIND_CTRL, SUPPORT_DETERMINISTIC_OPTS. The configuration-dependent ones
// (sync fence fds, cycle stats, VPR, railgating) the fake does not claim.
inline constexpr uint64_t kL4tCharacteristicsFlags = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 7) |
                                                     (1u << 8) | (1u << 18) | (1u << 23) |
                                                     (1u << 24);

// GM20B's default big page size (L4T-AS-1): an address space made by opening nvhost-as-gpu, or
// by ALLOC_AS with big_page_size 0, has it; 128 KiB only by ALLOC_AS asking for it (L4T-CTRL-11).
inline constexpr uint32_t kL4tDefaultBigPageSize = 0x10000;

// The guest's 0xA0-byte characteristics in r32.7.4's 256-byte layout, with r32.7.4's own values
// where the ABIs differ (L4T-CTRL-2, -3): its flags, the last ioctl numbers of each node, the
// batch and register-operation limits, and the default big page `big_page_size` the fake's
// opened address spaces have (GM20B's 64 KiB, L4T-AS-1; 128 KiB, the sim's, over FUSE alone) with
// its pde_coverage_bit_count (26 for 64 KiB, 27 for 128 KiB). Other members the guest lacks are 0
// (the PCI and VBIOS ids, the preemption modes, ...).
abi::l4t::nvgpu_ctrl::GpuCharacteristics ToL4tCharacteristics(
    const abi::nvhost_ctrl_gpu::GpuCharacteristics& g,
    uint32_t big_page_size = kL4tDefaultBigPageSize);

// SUBMIT_GPFIFO's L4T flags as the sim's: the bits are the same (FENCE_WAIT, FENCE_GET,
// HW_FORMAT, SUPPRESS_WFI; SKIP_BUFFER_REFCOUNTING changes nothing here), and r32.7.4 ignores the
// bits it does not define (L4T-CH-10), so they never reach the sim. SYNC_FENCE with FENCE_WAIT or
// FENCE_GET (a sync_file fd, which the fake can neither read nor make) is EINVAL; 0 otherwise.
// (A caller that takes fds gets FENCE_GET with SYNC_FENCE's fence fd: serve_channel.cc clears
// SYNC_FENCE before asking here.)
int SubmitFlagsToGuest(uint32_t l4t_flags, uint32_t* guest_flags);

// MAP_BUFFER_EX's flags and kinds as the sim's: DIRECT_KIND_CTRL is required (EINVAL without it,
// as r32.7.4); compr_kind is used when set, else incompr_kind, and both -1 is ENOMEM as r32.7.4
// answers it (the sim has no comptags to run out of, so the fallback is never needed). Only
// FIXED_OFFSET and CACHEABLE pass; the other L4T bits change nothing in the sim (and bit 8 is the
// sim's own MODIFY).
int MapBufferExToGuest(uint32_t l4t_flags, int16_t compr_kind, int16_t incompr_kind,
                       uint32_t* guest_flags, int32_t* kind);

// nvmap READ/WRITE: `count` atoms of `elem_size` bytes, `hmem_stride` apart in the object from
// `offset`, `user_stride` apart in the caller from `addr`. Checked as r32.7.4 checks them
// (L4T-MAP-5: `addr`, `elem_size` and `count` nonzero; strides at least `elem_size`;
// `user_stride` times `count` within the object past `offset`; every atom inside the object; equal
// sizes and strides at an 8-aligned offset first become one atom), then the fake's own bounds:
// the total at most kMaxRwBytes and the atoms at most kMaxRwAtoms (a serving thread must not copy
// without end). Contiguous atoms on both sides merge into one.
struct RwAtom {
  uint64_t object_offset;
  uint64_t caller_addr;
  uint64_t len;
};
inline constexpr uint64_t kMaxRwBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxRwAtoms = uint64_t{1} << 20;  // unless both sides are contiguous
// 0 and the atoms, or EINVAL.
int PlanRw(const abi::l4t::nvmap::RwHandle& rw, uint64_t object_size, std::vector<RwAtom>* atoms);

}  // namespace nvsentry::hostshim::fake_l4t
