#include "hostshim/fake_l4t/translate.h"

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvgpu_as.h"

namespace nvsentry::hostshim::fake_l4t {
namespace l4t = abi::l4t;

int UnservedCodeErrno(l4t::L4tNode node, uint32_t code) {
  struct Limits {
    uint32_t magic, last_nr, max_size;
  };
  Limits lim;
  switch (node) {
    // nvgpu.h: NVGPU_GPU_IOCTL_LAST, NVGPU_AS_IOCTL_LAST, NVGPU_IOCTL_CHANNEL_LAST,
    // NVGPU_TSG_IOCTL_LAST and the matching *_MAX_ARG_SIZE.
    case l4t::L4tNode::kNvhostCtrlGpu: lim = {'G', 40, 264}; break;
    case l4t::L4tNode::kNvhostAsGpu: lim = {'A', 12, 40}; break;
    case l4t::L4tNode::kNvhostGpu: lim = {'H', 128, 80}; break;
    case l4t::L4tNode::kTsg: lim = {'T', 12, 24}; break;
    default: return ENOTTY;
  }
  const uint32_t type = (code >> 8) & 0xFF, nr = code & 0xFF, size = (code >> 16) & 0x3FFF;
  if (type != lim.magic || nr == 0 || nr > lim.last_nr || size > lim.max_size) return EINVAL;
  return ENOTTY;
}

int ErrnoOf(abi::NvError err, bool syncpoint_wait) {
  if (err == abi::NvError::kSuccess) return 0;
  if (syncpoint_wait && err == abi::NvError::kTimeout) return EAGAIN;
  return abi::NvErrorToErrno(err);
}

l4t::nvgpu_ctrl::GpuCharacteristics ToL4tCharacteristics(
    const abi::nvhost_ctrl_gpu::GpuCharacteristics& g, uint32_t big_page_size) {
  l4t::nvgpu_ctrl::GpuCharacteristics h;
  std::memset(&h, 0, sizeof h);
  // The first 56 bytes are the same members in the same order.
  h.arch = g.arch;
  h.impl = g.impl;
  h.rev = g.rev;
  h.num_gpc = g.num_gpc;
  h.l2_cache_size = g.l2_cache_size;
  h.on_board_video_memory_size = g.on_board_video_memory_size;
  h.num_tpc_per_gpc = g.num_tpc_per_gpc;
  h.bus_type = g.bus_type;
  // GM20B's default big page is 64 KiB (L4T-AS-1, L4T-CTRL-2), and the first page-table level's
  // low bit with it 26; with 128 KiB (the sim's) 27.
  h.big_page_size = big_page_size;
  h.compression_page_size = g.compression_page_size;
  h.pde_coverage_bit_count = big_page_size == 0x10000 ? 26 : 27;
  h.available_big_page_sizes = g.available_big_page_sizes;
  // Then another order.
  h.flags = kL4tCharacteristicsFlags;
  h.twod_class = g.twod_class;
  h.threed_class = g.threed_class;
  h.compute_class = g.compute_class;
  h.gpfifo_class = g.gpfifo_class;
  h.inline_to_memory_class = g.inline_to_memory_class;
  h.dma_copy_class = g.dma_copy_class;
  h.gpc_mask = g.gpc_mask;
  h.sm_arch_sm_version = g.sm_arch_sm_version;
  h.sm_arch_spa_version = g.sm_arch_spa_version;
  h.sm_arch_warp_count = g.sm_arch_warp_count;
  h.gpu_va_bit_count = static_cast<uint8_t>(g.gpu_va_bit_count);
  h.max_fbps_count = g.max_fbps_count;
  h.fbp_en_mask = g.fbp_en_mask;
  h.max_ltc_per_fbp = g.max_ltc_per_fbp;
  h.max_lts_per_ltc = g.max_lts_per_ltc;
  h.max_tex_per_tpc = g.max_tex_per_tpc;
  h.max_gpc_count = g.max_gpc_count;
  h.rop_l2_en_mask_deprecated[0] = g.rop_l2_en_mask_0;
  h.rop_l2_en_mask_deprecated[1] = g.rop_l2_en_mask_1;
  static_assert(sizeof h.chipname == sizeof g.chipname);
  std::memcpy(h.chipname, &g.chipname, sizeof h.chipname);  // both little-endian ASCII
  h.gr_compbit_store_base_hw = g.gr_compbit_store_base_hw;
  // nvgpu.h's NVGPU_*_IOCTL_LAST; ioctl_as.h's batch limit; ioctl_dbg.h's reg-ops limit.
  h.gpu_ioctl_nr_last = 40;
  h.tsg_ioctl_nr_last = 12;
  h.dbg_gpu_ioctl_nr_last = 26;
  h.ioctl_channel_nr_last = 128;
  h.as_ioctl_nr_last = 12;
  h.event_ioctl_nr_last = 1;
  h.map_buffer_batch_limit = 256;
  h.reg_ops_limit = 1024;
  return h;
}

int SubmitFlagsToGuest(uint32_t l4t_flags, uint32_t* guest_flags) {
  // nvgpu.h: FENCE_WAIT 0, FENCE_GET 1, HW_FORMAT 2, SYNC_FENCE 3, SUPPRESS_WFI 4,
  // SKIP_BUFFER_REFCOUNTING 5; r32.7.4 ignores the other bits (L4T-CH-10).
  constexpr uint32_t kFenceWait = 1u << 0, kFenceGet = 1u << 1, kSyncFence = 1u << 3,
                     kPassed = 0x17;
  if ((l4t_flags & kSyncFence) && (l4t_flags & (kFenceWait | kFenceGet))) return EINVAL;
  *guest_flags = l4t_flags & kPassed;
  return 0;
}

int MapBufferExToGuest(uint32_t l4t_flags, int16_t compr_kind, int16_t incompr_kind,
                       uint32_t* guest_flags, int32_t* kind) {
  namespace as = l4t::nvgpu_as;
  if (!(l4t_flags & as::kMapDirectKindCtrl)) return EINVAL;  // L4T-AS-6
  // No kind at all: r32.7.4 finds neither comptags nor a fallback (L4T-AS-12).
  if (compr_kind == as::kKindInvalid && incompr_kind == as::kKindInvalid) return ENOMEM;
  const int16_t k = compr_kind != as::kKindInvalid ? compr_kind : incompr_kind;
  if (k < 0) return EINVAL;
  *kind = k;
  *guest_flags = l4t_flags & (as::kMapFixedOffset | as::kMapCacheable);
  return 0;
}

int PlanRw(const l4t::nvmap::RwHandle& rw, uint64_t object_size, std::vector<RwAtom>* atoms) {
  atoms->clear();
  // r32.7.4's checks (L4T-MAP-5), in u64 where the driver's unsigned long is 64 bits.
  if (rw.addr == 0 || rw.elem_size == 0 || rw.count == 0) return EINVAL;
  uint64_t elem = rw.elem_size, hstride = rw.hmem_stride, ustride = rw.user_stride, n = rw.count;
  const uint64_t offset = rw.offset;
  if (elem == hstride && elem == ustride && offset % 8 == 0) {  // one atom of the whole run
    elem *= n;
    hstride = ustride = elem;
    n = 1;
  }
  if (elem > object_size || offset >= object_size || elem > ustride || elem > hstride ||
      ustride > (object_size - offset) / n || offset + hstride * (n - 1) + elem > object_size)
    return EINVAL;
  // Bounds of the fake: a serving thread must not copy without end.
  if (n * elem > kMaxRwBytes) return EINVAL;
  const uint64_t caller_span = (n - 1) * ustride + elem;
  if (rw.addr + caller_span < rw.addr) return EINVAL;  // wraps the caller's address space
  if (n == 1 || (hstride == elem && ustride == elem)) {
    atoms->push_back({offset, rw.addr, n * elem});  // one contiguous run on both sides
    return 0;
  }
  if (n > kMaxRwAtoms) return EINVAL;
  for (uint64_t i = 0; i < n; ++i) {
    const RwAtom a{offset + i * hstride, rw.addr + i * ustride, elem};
    if (!atoms->empty()) {
      RwAtom& b = atoms->back();
      if (b.object_offset + b.len == a.object_offset && b.caller_addr + b.len == a.caller_addr) {
        b.len += a.len;
        continue;
      }
    }
    atoms->push_back(a);
  }
  return 0;
}

}  // namespace nvsentry::hostshim::fake_l4t
