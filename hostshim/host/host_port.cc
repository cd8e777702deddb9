#include "hostshim/host/host_port.h"

#include <fcntl.h>

#include <atomic>
#include <cerrno>

#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim::host {
namespace {

struct Route {
  absl::Mutex mu;
  std::string dir ABSL_GUARDED_BY(mu);
};

Route& TheRoute() {
  static Route* r = new Route;  // never destroyed: host calls may outlive static destructors
  return *r;
}

// Read on every host ioctl: no lock when no port is set (the kernel's path).
std::atomic<HostPort*> g_port{nullptr};

}  // namespace

void SetHostPort(std::string_view dir, HostPort* port) {
  Route& r = TheRoute();
  absl::MutexLock l(&r.mu);
  r.dir = port != nullptr ? std::string(dir) : std::string();
  g_port.store(port, std::memory_order_release);
}

int OpenHostNode(const std::string& path) {
  if (HostPort* port = g_port.load(std::memory_order_acquire); port != nullptr) {
    std::string dir;
    {
      Route& r = TheRoute();
      absl::MutexLock l(&r.mu);
      dir = r.dir;
    }
    if (path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 &&
        path[dir.size()] == '/') {
      const int fd = port->Open(std::string_view(path).substr(dir.size() + 1));
      if (fd >= 0) return fd;
      errno = -fd;
      return -1;
    }
  }
  return open(path.c_str(), O_RDWR | O_CLOEXEC);
}

std::optional<int> PortIoctl(int fd, uint32_t code, unsigned long arg) {
  HostPort* port = g_port.load(std::memory_order_acquire);
  if (port == nullptr) return std::nullopt;
  return port->Ioctl(fd, code, arg);
}

}  // namespace nvsentry::hostshim::host
