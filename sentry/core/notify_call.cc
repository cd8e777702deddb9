#include "sentry/core/notify_call.h"

#include <cstdio>

#include "sentry/core/guest_memory.h"

namespace nvsentry::sentry {

bool NotifyCall::Read(uint64_t addr, std::span<uint8_t> dst) { return ReadGuest(tid_, addr, dst); }

// Immediate calls were confirmed live after the copy-in, and the kernel (killable receive) keeps
// them from being interrupted by anything but death, so the write needs no second check.
bool NotifyCall::Write(uint64_t addr, std::span<const uint8_t> src) {
  return WriteGuest(tid_, addr, src);
}

bool NotifyCall::StillValid() { return listener_.IdValid(id_); }

std::shared_ptr<hostshim::Continuation> NotifyCall::Detach(std::string_view what,
                                                           std::vector<uint8_t> arg,
                                                           proxy::Finisher finish) {
  if (parking_ == nullptr) return nullptr;
  return ParkCall(listener_, *parking_, id_, tid_, what, std::move(arg), std::move(finish));
}

int NotifyCall::PlaceFd(int fd, bool cloexec) { return listener_.AddFd(id_, fd, cloexec); }

pid_t NotifyCall::tgid() {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", tid_);
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return -1;
  char line[256];
  pid_t tgid = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "Tgid: %d", &tgid) == 1) break;
  }
  std::fclose(f);
  return tgid;
}

std::shared_ptr<proxy::Session> NotifyCall::SessionOfFd(int fd) {
  return sessions_ != nullptr ? sessions_->Lookup(tid_, fd) : nullptr;
}

}  // namespace nvsentry::sentry
