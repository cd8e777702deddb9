// The caller of a device call in unit tests: this test process (its memory backs nvmap objects),
// and the device sessions a test places under fd numbers for BIND_CHANNEL, SET_NVMAP_FD and the
// like.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>

#include "hostshim/backend.h"

namespace nvsentry::hostshim::sim {

class FakeCaller : public Caller {
 public:
  pid_t tid() const override { return gettid(); }
  pid_t tgid() override { return getpid(); }
  std::shared_ptr<DeviceBackend> BackendOf(int32_t fd) override {
    auto it = fds.find(fd);
    return it == fds.end() ? nullptr : it->second;
  }
  int PlaceFd(int, bool) override { return -ENOSYS; }  // no guest process to place it in
  std::map<int32_t, std::shared_ptr<DeviceBackend>> fds;
};

}  // namespace nvsentry::hostshim::sim
