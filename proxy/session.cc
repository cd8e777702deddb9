#include "proxy/session.h"

#include "proxy/trace.h"

namespace nvsentry::proxy {

Session::Session(const abi::DeviceDesc& device, std::unique_ptr<hostshim::DeviceBackend> backend,
                 const GuestConfig& config)
    : device_(device), backend_(std::move(backend)), config_(config) {}

abi::NvError Session::ChargeFd() {
  if (fd_charged_ || !config_.services.budget) return abi::NvError::kSuccess;
  abi::NvError e = config_.services.budget->Charge(BudgetKind::kOpenFds);
  if (e == abi::NvError::kSuccess) fd_charged_ = config_.services.budget;
  return e;
}

Session::~Session() {
  if (fd_charged_) fd_charged_->Release(BudgetKind::kOpenFds);
  if (traced_ && config_.services.tracer != nullptr)
    config_.services.tracer->Close({0, device_.path, traced_fd_, false});
}

}  // namespace nvsentry::proxy
