// Where the host backend's calls to the host's driver go: the kernel's open(2) and ioctl(2), or a
// host served inside this process for the nodes of one directory name (an in-process simulated
// Jetson: hostshim/fake_l4t/in_process_jetson.h, `nvsentry run --simulated-jetson`). Every open of
// a host node and every host ioctl of the backend goes through here (OpenHostNode, and
// host_call.h's HostIoctl), so the backend runs the same code over either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvsentry::hostshim::host {

class HostPort {
 public:
  virtual ~HostPort() = default;
  // A new open of the node `name` ("nvmap", "nvhost-gpu", ...): an fd of this process that stands
  // for it (closing its last copy closes the open, as a driver's release), or -errno.
  virtual int Open(std::string_view name) = 0;
  // ioctl(fd, code, arg) when `fd` is one of this port's: 0 or the errno; nullopt otherwise.
  virtual std::optional<int> Ioctl(int fd, uint32_t code, unsigned long arg) = 0;
};

// Routes the opens of `dir`/NAME, and the ioctls of the fds the port made, to `port` (one port at
// a time; it outlives every host call made while it is set); null routes everything to the
// kernel again.
void SetHostPort(std::string_view dir, HostPort* port);

// open(path, O_RDWR | O_CLOEXEC), or the port's Open when `path` is in its directory: the fd, or
// -1 with errno set.
int OpenHostNode(const std::string& path);

// The port's answer for an ioctl on `fd`, when a port is set and `fd` is one of its; else nullopt.
std::optional<int> PortIoctl(int fd, uint32_t code, unsigned long arg);

}  // namespace nvsentry::hostshim::host
