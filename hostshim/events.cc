#include "hostshim/events.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace nvsentry::hostshim {

EventSet::~EventSet() {
  for (auto& [id, fd] : fds_) close(fd);
}

int EventSet::Get(uint32_t id) {
  absl::MutexLock l(&mu_);
  if (auto it = fds_.find(id); it != fds_.end()) return it->second;
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return -errno;
  fds_[id] = fd;
  return fd;
}

void EventSet::Signal(uint32_t id) {
  absl::MutexLock l(&mu_);
  if (auto it = fds_.find(id); it != fds_.end()) {
    uint64_t one = 1;
    (void)!write(it->second, &one, sizeof one);
  }
}

bool EventSet::Clear(uint32_t id) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(id);
  if (it == fds_.end()) return false;
  uint64_t v;
  return read(it->second, &v, sizeof v) == sizeof v;
}

}  // namespace nvsentry::hostshim
