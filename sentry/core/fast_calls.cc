#include "sentry/core/fast_calls.h"

#include <vector>

#include "abi/catalogue.h"
#include "proxy/nvdrv_service.h"

namespace nvsentry::sentry {
namespace {

// A /dev/nvdrv command that carries a device ioctl is pure itself; what it carries is known only
// once its argument is copied in.
bool FastEntry(const abi::DeviceDesc& dev, const abi::IoctlDesc& d) {
  if (dev.id == abi::DeviceId::kNvdrv && proxy::NvdrvService::Carries(d.code)) return false;
  return !d.variable() && (d.pure() || d.may_block());
}

}  // namespace

FastCalls::FastCalls(const SyscallTable& syscalls) : syscalls_(syscalls) {
  // A code is fast only if nothing slow shares it: devices share magics (the channels, ctrl and
  // ctrl-gpu), and a variable-size entry matches a whole family of codes.
  absl::flat_hash_set<uint32_t> slow;
  std::vector<uint32_t> slow_families;
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    for (const abi::IoctlDesc& d : dev.ioctls) {
      absl::flat_hash_set<uint32_t>& into = FastEntry(dev, d) ? fast_ioctls_ : slow;
      into.insert(d.code);
      for (const abi::CodeAlias& a : d.aliases) into.insert(a.code);
      if (d.variable()) slow_families.push_back(d.code);
    }
  }
  for (uint32_t code : slow) fast_ioctls_.erase(code);
  for (uint32_t family : slow_families)
    absl::erase_if(fast_ioctls_,
                   [family](uint32_t code) { return (code & ~abi::kIocSizeMask) == family; });
}

bool FastCalls::IsFast(const seccomp_notif& req) const {
  switch (syscalls_.Classify(req.data.arch, req.data.nr)) {
    case TrappedCall::kIoctl: return IsFastIoctl(static_cast<uint32_t>(req.data.args[1]));
    default: return true;  // opens, and calls that continue untouched
  }
}

}  // namespace nvsentry::sentry
