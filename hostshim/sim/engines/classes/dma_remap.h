// The DMA copy engine's component remap (LAUNCH_DMA REMAP_ENABLE with SET_REMAP_COMPONENTS and
// the two constants): a line counts elements of NUM_SRC components of COMPONENT_SIZE bytes, and
// each of the NUM_DST destination components comes from a source component (zero when the source
// has fewer), a constant (its low bytes), or is left as it is in memory (NO_WRITE).
#pragma once

#include <cstdint>
#include <cstring>

#include "hostshim/sim/engines/methods.h"

namespace nvsentry::hostshim::sim {

struct DmaRemap {
  uint32_t comp_size = 1, num_src = 1, num_dst = 1;
  uint32_t sel[4] = {};
  uint8_t consts[2][4] = {};
  bool uses_src = false, keeps_dst = false;

  // From SET_REMAP_COMPONENTS and SET_REMAP_CONST_A/B.
  static DmaRemap From(uint32_t components, uint32_t const_a, uint32_t const_b) {
    namespace d = methods::dma;
    using methods::Bits;
    DmaRemap rm;
    rm.comp_size = Bits(components, d::kComponentSizeHi, d::kComponentSizeLo) + 1;
    rm.num_src = Bits(components, d::kNumSrcHi, d::kNumSrcLo) + 1;
    rm.num_dst = Bits(components, d::kNumDstHi, d::kNumDstLo) + 1;
    for (uint32_t i = 0; i < rm.num_dst; ++i) {
      rm.sel[i] = Bits(components, 4 * i + 2, 4 * i);
      if (rm.sel[i] < 4) rm.uses_src = true;
      if (rm.sel[i] >= d::kRemapNoWrite) rm.keeps_dst = true;
    }
    std::memcpy(rm.consts[0], &const_a, 4);  // a component takes the constant's low bytes
    std::memcpy(rm.consts[1], &const_b, 4);
    return rm;
  }

  uint32_t src_elem() const { return comp_size * num_src; }
  uint32_t dst_elem() const { return comp_size * num_dst; }
  // Neither reads the source nor keeps the destination: the same bytes for every element.
  bool fill() const { return !uses_src && !keeps_dst; }

  // Builds n destination elements at `out` (holding the destination's bytes when keeps_dst)
  // from n source elements at `in`.
  void Apply(const uint8_t* in, uint8_t* out, size_t n) const {
    namespace d = methods::dma;
    const uint32_t se = src_elem(), de = dst_elem(), cs = comp_size;
    for (size_t i = 0; i < n; ++i, in += se, out += de) {
      for (uint32_t c = 0; c < num_dst; ++c) {
        const uint32_t s = sel[c];
        if (s < 4) {
          if (s < num_src) {
            std::memcpy(out + c * cs, in + s * cs, cs);
          } else {
            std::memset(out + c * cs, 0, cs);  // a component the source does not have
          }
        } else if (s == d::kRemapConstASel || s == d::kRemapConstBSel) {
          std::memcpy(out + c * cs, consts[s - d::kRemapConstASel], cs);
        }
      }
    }
  }
};

}  // namespace nvsentry::hostshim::sim
