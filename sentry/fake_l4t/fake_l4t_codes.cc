#include "sentry/fake_l4t/fake_l4t_codes.h"

#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"

namespace nvsentry::sentry {

std::span<const uint32_t> FdHandingCodes() {
  namespace hg = abi::l4t::nvgpu_ctrl;
  namespace hch = abi::l4t::nvgpu_channel;
  // SUBMIT_GPFIFO for its SYNC_FENCE flag's fence fd (every submission stops for the fake).
  static constexpr uint32_t kCodes[] = {hg::kAllocAs, hg::kOpenTsg, hg::kOpenChannel,
                                        hch::kSubmitGpfifo};
  return kCodes;
}

}  // namespace nvsentry::sentry
