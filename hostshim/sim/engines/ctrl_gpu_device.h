// /dev/nvhost-ctrl-gpu on the simulated GPU: the GM20B's self-description (characteristics, TPC
// masks, ZCULL, SMs), the GPU-wide ZBC table, cache and debug controls, clock- and power-gating
// controls, and the GPU clock. Every ioctl answers as Switchbrew says for a GM20B, and where
// Switchbrew is silent as NVIDIA's Linux nvgpu driver does. Sessions are cheap views of one
// GpuControlState, which holds what is GPU-wide.
#pragma once

#include <atomic>
#include <cstdint>

#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/events.h"
#include "hostshim/sim/engines/zbc_table.h"

namespace nvsentry::hostshim::sim {

// What every ctrl-gpu session of one GPU shares. Thread-safe; no method calls out.
class GpuControlState {
 public:
  GpuControlState() = default;
  GpuControlState(const GpuControlState&) = delete;
  GpuControlState& operator=(const GpuControlState&) = delete;

  ZbcTable& zbc() { return zbc_; }

  void SetMmuDebugMode(bool on) { mmu_debug_.store(on, std::memory_order_relaxed); }
  bool mmu_debug_mode() const { return mmu_debug_.load(std::memory_order_relaxed); }

  // The clock-gating and power-gating control words: Set changes the bits in `mask` to those of
  // `value`; Get returns the bits in `mask`. Both start all clear.
  void SetCgControls(uint32_t mask, uint32_t value);
  uint32_t CgControls(uint32_t mask) const;
  void SetPgControls(uint32_t mask, uint32_t value);
  uint32_t PgControls(uint32_t mask) const;

  // Called by a channel that faults: its user data is what GET_ERROR_CHANNEL_USER_DATA returns
  // from then on (0 until a channel has faulted).
  void ReportChannelError(uint64_t user_data) {
    error_user_data_.store(user_data, std::memory_order_relaxed);
  }
  uint64_t error_channel_user_data() const {
    return error_user_data_.load(std::memory_order_relaxed);
  }

 private:
  ZbcTable zbc_;
  std::atomic<bool> mmu_debug_{false};
  std::atomic<uint64_t> error_user_data_{0};
  mutable absl::Mutex mu_;
  uint32_t cg_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t pg_ ABSL_GUARDED_BY(mu_) = 0;
};

class CtrlGpuDevice : public DeviceBackend {
 public:
  // `budget` (may be null) is charged for the session's event fds (open_fds).
  explicit CtrlGpuDevice(GpuControlState& state, BudgetAccount* budget = nullptr)
      : state_(state), events_(budget) {}
  Result Ioctl(Call& call) override;
  // Event 1 (error event) and 2; nothing signals them yet.
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

 private:
  abi::NvError GetCharacteristics(Call& call);
  abi::NvError GetTpcMasks(Call& call);
  abi::NvError WaitForPauseV1(Call& call);
  GpuControlState& state_;
  EventSet events_;
};

}  // namespace nvsentry::hostshim::sim
