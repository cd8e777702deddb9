#include "sentry/fake_l4t/fake_l4t_codes.h"

#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "abi/l4t/nvmap.h"

namespace nvsentry::sentry {

std::span<const uint32_t> FdHandingCodes() {
  namespace hg = abi::l4t::nvgpu_ctrl;
  namespace hch = abi::l4t::nvgpu_channel;
  namespace hm = abi::l4t::nvmap;
  namespace ht = abi::l4t::nvgpu_tsg;
  // SUBMIT_GPFIFO for its SYNC_FENCE flag's fence fd (every submission stops for the fake);
  // nvmap's FREE closes its handle fd in the caller.
  static constexpr uint32_t kCodes[] = {
      hg::kAllocAs,  hg::kOpenTsg, hg::kOpenChannel, hch::kSubmitGpfifo, hm::kCreate,
      hm::kCreate64, hm::kFree,    hm::kGetFd,       hm::kFromFd,        ht::kEventIdCtrl};
  return kCodes;
}

}  // namespace nvsentry::sentry
