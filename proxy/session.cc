#include "proxy/session.h"

#include "proxy/service_endpoint.h"

namespace nvsentry::proxy {

Session::Session(const abi::DeviceDesc& device, std::unique_ptr<hostshim::DeviceBackend> backend,
                 const GuestConfig& config)
    : device_(device), backend_(std::move(backend)), config_(config) {}

Session::Session(const abi::DeviceDesc& device, std::unique_ptr<ServiceEndpoint> endpoint,
                 const GuestConfig& config)
    : device_(device), endpoint_(std::move(endpoint)), config_(config) {}

Session::~Session() = default;

}  // namespace nvsentry::proxy
