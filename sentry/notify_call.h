// One trapped ioctl as the copy engine sees it (proxy::CallContext), backed by a seccomp
// notification; and the continuation a parked call becomes.
#pragma once

#include <sys/types.h>

#include <atomic>

#include "proxy/guest_io.h"
#include "sentry/listener.h"
#include "sentry/session_table.h"

namespace nvsentry::sentry {

class NotifyCall : public proxy::CallContext {
 public:
  NotifyCall(const Listener& listener, uint64_t id, pid_t tid,
             SessionTable* sessions = nullptr)
      : listener_(listener), id_(id), tid_(tid), sessions_(sessions) {}
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
};

// Signals that would interrupt a driver's interruptible wait in thread `tid`: pending for the
// thread or its process, not blocked, not ignored. Read from /proc/TID/status.
struct PendingSignals {
  uint64_t thread;
  uint64_t process;
};
bool ReadPendingSignals(pid_t tid, PendingSignals* out);

// Parked calls ever made and dropped because their thread went away; for logs and tests.
struct ParkStats {
  std::atomic<uint64_t> parked{0};
  std::atomic<uint64_t> finished{0};
  std::atomic<uint64_t> interrupted{0};
  std::atomic<uint64_t> dropped{0};
};
ParkStats& GlobalParkStats();

}  // namespace nvsentry::sentry
