#include "hostshim/host/as_session.h"

#include "hostshim/host/host_context.h"

namespace nvsentry::hostshim::host {

Result AsSession::Ioctl(Call& call) { return NotTranslated(call); }

}  // namespace nvsentry::hostshim::host
