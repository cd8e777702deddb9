#include "hostshim/backend.h"

namespace nvsentry::hostshim {
namespace {

// A session the driver could not keep: every ioctl answers why.
class RefusedDevice : public DeviceBackend {
 public:
  explicit RefusedDevice(abi::NvError why) : why_(why) {}
  Result Ioctl(Call&) override { return Result::Done(why_); }

 private:
  abi::NvError why_;
};

}  // namespace

std::unique_ptr<DeviceBackend> Driver::OpenOrRefusing(const abi::DeviceDesc& device) {
  abi::NvError refused = abi::NvError::kSuccess;
  std::unique_ptr<DeviceBackend> b = Open(device, refused);
  return b ? std::move(b) : std::make_unique<RefusedDevice>(refused);
}

}  // namespace nvsentry::hostshim
