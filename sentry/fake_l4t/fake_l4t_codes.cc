#include "sentry/fake_l4t/fake_l4t_codes.h"

#include "abi/l4t/nvgpu_ctrl.h"

namespace nvsentry::sentry {

std::span<const uint32_t> FdHandingCodes() {
  namespace hg = abi::l4t::nvgpu_ctrl;
  static constexpr uint32_t kCodes[] = {hg::kAllocAs, hg::kOpenTsg, hg::kOpenChannel};
  return kCodes;
}

}  // namespace nvsentry::sentry
