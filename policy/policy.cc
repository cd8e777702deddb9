#include "policy/policy.h"

#include "abi/services.h"

namespace nvsentry::policy {

const DeviceRule& Policy::Device(abi::DeviceId id) const {
  static const DeviceRule kDefault;
  auto it = devices.find(id);
  return it == devices.end() ? kDefault : it->second;
}

IoctlRule Policy::Ioctl(const abi::DeviceDesc& dev, const abi::IoctlDesc& desc) const {
  if (auto it = ioctls.find(&desc); it != ioctls.end()) return it->second;
  IoctlRule r;
  r.verdict = Device(dev.id).ioctls;
  return r;
}

Policy DefaultPolicy() {
  Policy p;
  p.source = "(default)";
  p.permission_mask = *abi::ServiceMask(p.service, p.firmware);
  return p;
}

}  // namespace nvsentry::policy
