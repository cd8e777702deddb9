#include "hostshim/host/ctrl_gpu_session.h"

#include "hostshim/host/host_context.h"

namespace nvsentry::hostshim::host {

Result CtrlGpuSession::Ioctl(Call& call) { return NotTranslated(call); }

}  // namespace nvsentry::hostshim::host
