// The GPU-wide ZBC (zero-bandwidth clear) table: 16 colour and 16 depth clear values that every
// context shares, as NVIDIA's nvgpu driver keeps it for the GM20B. It starts with nvgpu's defaults
// (opaque black, transparent black, opaque white; depth 1.0 and 0.0). Adding a value the table
// already holds only counts another reference; a new value takes the next free entry, and when
// all 16 of its kind are taken the add fails. Entries are never removed (as on the hardware,
// until a GPU reset). Thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim::sim {

class ZbcTable {
 public:
  static constexpr uint32_t kSize = 16;  // entries of each kind
  enum Type : uint32_t { kInvalid = 0, kColor = 1, kDepth = 2 };

  // Hardware format codes of the defaults (NVIDIA's gr_ds_zbc_* register fields).
  static constexpr uint32_t kColorFmtZero = 0x01;
  static constexpr uint32_t kColorFmtUnormOne = 0x02;
  static constexpr uint32_t kColorFmtA8B8G8R8 = 0x28;
  static constexpr uint32_t kDepthFmtFp32 = 0x01;
  static constexpr uint32_t kDefaultColors = 3;
  static constexpr uint32_t kDefaultDepths = 2;

  ZbcTable();

  // ZBC_SET_TABLE. BadParameter for a type other than colour or depth; InsufficientMemory when
  // the value is new and its kind's 16 entries are all taken.
  abi::NvError Set(const abi::nvhost_ctrl_gpu::ZbcSetTable& in);
  // ZBC_QUERY_TABLE. Type 0 asks for the table size (index_size = 16); colour and depth read the
  // entry at index_size (BadParameter when >= 16), unused entries reading as zeros.
  abi::NvError Query(abi::nvhost_ctrl_gpu::ZbcQueryTable& q) const;

 private:
  struct Color {
    uint32_t ds[4];
    uint32_t l2[4];
    uint32_t format;
    uint32_t ref_cnt;
  };
  struct Depth {
    uint32_t depth;
    uint32_t format;
    uint32_t ref_cnt;
  };
  abi::NvError AddLocked(const abi::nvhost_ctrl_gpu::ZbcSetTable& in)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::array<Color, kSize> color_ ABSL_GUARDED_BY(mu_) = {};
  std::array<Depth, kSize> depth_ ABSL_GUARDED_BY(mu_) = {};
  uint32_t colors_used_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t depths_used_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::sim
