// Opening a device node on the guest's behalf, by path, with the checks of the guest contract:
// the path must be a catalogue device that exists on the guest's firmware, the guest's service
// must hold the device's permission bit, and the debugger devices need debug mode. Used by both
// the Linux open path and the /dev/nvdrv Open command.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "hostshim/backend.h"
#include "proxy/guest_config.h"
#include "proxy/session.h"

namespace nvsentry::proxy {

// The verdict for opening `dev` (or nullptr for a path the catalogue does not have), in this
// order: DeviceNotFound (not on the guest's firmware), AccessDenied (its permission bit is not in
// the guest's mask), NotSupported (debug devices without debug mode), DeviceNotFound (a device
// the identity allows but the policy's backend is "deny"), else Success. The identity comes
// first, so a policy that denies a device the mask refuses anyway answers as the service does.
// The open_fds budget is charged separately, when the session is made (Session::ChargeFd).
abi::NvError MayOpen(const GuestConfig& config, const abi::DeviceDesc* dev);

// A new session of `dev` (after MayOpen said yes), charged to the open_fds budget: the /dev/nvdrv
// service, or a session from `driver`. Null with the driver's reason when the device's own
// budget (e.g. `channels`) or open_fds is spent (InsufficientMemory). The one way both the Linux
// open and the nvdrv Open command make a session.
struct NewSession {
  std::shared_ptr<Session> session;
  abi::NvError refused = abi::NvError::kSuccess;
};
NewSession MakeSession(const GuestConfig& config, const abi::DeviceDesc& dev,
                       hostshim::Driver& driver);

// errno for a Linux open refused with `err` (ENOENT, EACCES, EOPNOTSUPP).
int OpenErrno(abi::NvError err);

}  // namespace nvsentry::proxy
