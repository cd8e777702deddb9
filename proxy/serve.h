// The one entry for a guest's ioctl on one of its sessions, however it arrived. A device ioctl
// or a /dev/nvdrv service command runs through the copy engine once (proxy/engine.h). A /dev/nvdrv
// command that carries a device ioctl (Ioctl, Ioctl2, Ioctl3) is copied and checked as a command
// first; the nvdrv service then turns it into the request a Linux ioctl on that device makes, and
// that request runs through the same engine, answered in the command's error word.
#pragma once

#include "proxy/engine.h"

namespace nvsentry::proxy {

IoctlOutcome Serve(Session& session, const IoctlRequest& req, CallContext& ctx,
                   const Answer& answer = DirectAnswer);

}  // namespace nvsentry::proxy
