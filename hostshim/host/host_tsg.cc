#include "hostshim/host/host_tsg.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvgpu_tsg.h"
#include "absl/strings/str_cat.h"
#include "hostshim/host/host_port.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {
namespace {

abi::NvError OpenNode(const std::string& dev_dir, const char* name, UniqueFd* fd) {
  const std::string path = absl::StrCat(dev_dir, "/", name);
  *fd = UniqueFd(OpenHostNode(path));
  if (*fd) return abi::NvError::kSuccess;
  const int e = errno;
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: cannot open {}: {}", path, strerror(e));
  return e == ENOENT ? abi::NvError::kDeviceNotFound : NvErrorOfHostErrno(e);
}

}  // namespace

abi::NvError OpenHostChannel(const std::string& dev_dir, const HostNote& note, pid_t tid,
                             HostChannelFds* out) {
  HostChannelFds fds;
  if (abi::NvError e = OpenNode(dev_dir, "nvhost-gpu", &fds.channel); e != abi::NvError::kSuccess)
    return e;
  if (abi::NvError e = OpenNode(dev_dir, "nvhost-tsg-gpu", &fds.tsg); e != abi::NvError::kSuccess)
    return e;
  abi::l4t::nvgpu_tsg::ChannelFd bind{fds.channel.get()};
  HostCallResult r = HostIoctlOf(fds.tsg.get(), abi::l4t::L4tNode::kTsg,
                                 abi::l4t::nvgpu_tsg::kBindChannel, bind, note, tid);
  if (r.err != 0) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: the host's TSG BIND_CHANNEL failed: {}; the channel is unusable",
                    strerror(r.err));
    return r.nv();
  }
  *out = std::move(fds);
  return abi::NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::host
