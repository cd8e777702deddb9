// One trapped ioctl as the copy engine sees it (proxy::CallContext), backed by a seccomp
// notification. A call that must wait becomes a parked call (parked_call.h).
#pragma once

#include <sys/types.h>

#include "proxy/guest_io.h"
#include "sentry/core/listener.h"
#include "sentry/core/parked_call.h"
#include "sentry/core/session_table.h"

namespace nvsentry::sentry {

class NotifyCall : public proxy::CallContext {
 public:
  // `parking` (null: the call cannot park) is what a parked call needs from the sentry.
  NotifyCall(const Listener& listener, uint64_t id, pid_t tid, SessionTable* sessions = nullptr,
             const Parking* parking = nullptr)
      : listener_(listener), id_(id), tid_(tid), sessions_(sessions), parking_(parking) {}
  bool Read(uint64_t addr, std::span<uint8_t> dst) override;
  bool Write(uint64_t addr, std::span<const uint8_t> src) override;
  bool StillValid() override;
  std::shared_ptr<hostshim::Continuation> Detach(std::string_view what, std::vector<uint8_t> arg,
                                                 proxy::Finisher finish) override;
  int PlaceFd(int fd, bool cloexec) override;
  pid_t tid() const override { return tid_; }
  pid_t tgid() override;
  std::shared_ptr<proxy::Session> SessionOfFd(int fd) override;

 private:
  const Listener& listener_;
  uint64_t id_;
  pid_t tid_;
  SessionTable* sessions_;
  const Parking* parking_;
};

}  // namespace nvsentry::sentry
