#include "hostshim/host/channel_session.h"

#include "hostshim/host/host_context.h"

namespace nvsentry::hostshim::host {

Result ChannelSession::Ioctl(Call& call) { return NotTranslated(call); }

}  // namespace nvsentry::hostshim::host
