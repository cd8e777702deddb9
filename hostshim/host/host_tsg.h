// A host channel as r32.7.4 serves one: a gm20b channel does nothing until it is bound to a TSG
// (docs/host-abi.md L4T-TSG-1..5), so each host channel the backend makes gets a TSG of its own
// (an open of the host's nvhost-tsg-gpu, then the TSG's BIND_CHANNEL with the channel's fd),
// before any setup call. The TSG lives as long as the channel; its fd is charged with the
// channel's (the channels budget: one TSG per channel).
#pragma once

#include <sys/types.h>

#include <string>

#include "abi/nverror.h"
#include "hostshim/host/host_call.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::host {

struct HostChannelFds {
  UniqueFd channel;  // the host's /dev/nvhost-gpu, opened
  UniqueFd tsg;      // the host's /dev/nvhost-tsg-gpu, opened, the channel bound to it
};

// Opens `dev_dir`'s nvhost-gpu and nvhost-tsg-gpu and binds the channel to the TSG (traced through
// `note` as thread `tid`'s). An error has a log line naming the node: DeviceNotFound when the host
// has no such node, else the host's errno as an NvError.
abi::NvError OpenHostChannel(const std::string& dev_dir, const HostNote& note, pid_t tid,
                             HostChannelFds* out);

}  // namespace nvsentry::hostshim::host
