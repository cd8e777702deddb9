#include "hostshim/sim/engines/zbc_table.h"

#include <algorithm>
#include <cstring>

namespace nvsentry::hostshim::sim {

using abi::NvError;
using abi::nvhost_ctrl_gpu::ZbcQueryTable;
using abi::nvhost_ctrl_gpu::ZbcSetTable;

ZbcTable::ZbcTable() {
  absl::MutexLock l(&mu_);
  ZbcSetTable v{};
  v.type = kColor;
  v.format = kColorFmtA8B8G8R8;  // opaque black
  v.color_ds[3] = 0x3F800000;    // alpha 1.0f
  v.color_l2[0] = 0xFF000000;
  AddLocked(v);
  v = {};
  v.type = kColor;
  v.format = kColorFmtZero;  // transparent black
  AddLocked(v);
  v = {};
  v.type = kColor;
  v.format = kColorFmtUnormOne;  // opaque white
  std::fill(std::begin(v.color_ds), std::end(v.color_ds), 0x3F800000u);
  std::fill(std::begin(v.color_l2), std::end(v.color_l2), 0xFFFFFFFFu);
  AddLocked(v);
  v = {};
  v.type = kDepth;
  v.format = kDepthFmtFp32;
  v.depth = 0x3F800000;  // 1.0f
  AddLocked(v);
  v.depth = 0;
  AddLocked(v);
}

NvError ZbcTable::Set(const ZbcSetTable& in) {
  absl::MutexLock l(&mu_);
  return AddLocked(in);
}

NvError ZbcTable::AddLocked(const ZbcSetTable& in) {
  switch (in.type) {
    case kColor: {
      for (uint32_t i = 0; i < colors_used_; ++i) {
        Color& c = color_[i];
        if (c.ref_cnt != 0 && c.format == in.format &&
            std::memcmp(c.ds, in.color_ds, sizeof c.ds) == 0 &&
            std::memcmp(c.l2, in.color_l2, sizeof c.l2) == 0) {
          ++c.ref_cnt;
          return NvError::kSuccess;
        }
      }
      if (colors_used_ == kSize) return NvError::kInsufficientMemory;
      Color& c = color_[colors_used_++];
      std::memcpy(c.ds, in.color_ds, sizeof c.ds);
      std::memcpy(c.l2, in.color_l2, sizeof c.l2);
      c.format = in.format;
      c.ref_cnt = 1;
      return NvError::kSuccess;
    }
    case kDepth: {
      for (uint32_t i = 0; i < depths_used_; ++i) {
        Depth& d = depth_[i];
        if (d.ref_cnt != 0 && d.format == in.format && d.depth == in.depth) {
          ++d.ref_cnt;
          return NvError::kSuccess;
        }
      }
      if (depths_used_ == kSize) return NvError::kInsufficientMemory;
      depth_[depths_used_++] = {in.depth, in.format, 1};
      return NvError::kSuccess;
    }
    default: return NvError::kBadParameter;
  }
}

NvError ZbcTable::Query(ZbcQueryTable& q) const {
  const uint32_t index = q.index_size;
  // The answer replaces every output; the type and index the guest asked for stay.
  std::memset(q.color_ds, 0, sizeof q.color_ds);
  std::memset(q.color_l2, 0, sizeof q.color_l2);
  q.depth = 0;
  q.ref_cnt = 0;
  q.format = 0;
  absl::MutexLock l(&mu_);
  switch (q.type) {
    case kInvalid: q.index_size = kSize; return NvError::kSuccess;
    case kColor: {
      if (index >= kSize) return NvError::kBadParameter;
      const Color& c = color_[index];
      std::memcpy(q.color_ds, c.ds, sizeof c.ds);
      std::memcpy(q.color_l2, c.l2, sizeof c.l2);
      q.format = c.format;
      q.ref_cnt = c.ref_cnt;
      return NvError::kSuccess;
    }
    case kDepth: {
      if (index >= kSize) return NvError::kBadParameter;
      const Depth& d = depth_[index];
      q.depth = d.depth;
      q.format = d.format;
      q.ref_cnt = d.ref_cnt;
      return NvError::kSuccess;
    }
    default: return NvError::kBadParameter;
  }
}

}  // namespace nvsentry::hostshim::sim
