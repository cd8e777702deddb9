#include "sentry/notify_call.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proxy/engine.h"
#include "sentry/guest_memory.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// Writes back only while the call is still pending: a parked call's thread may be long gone and
// its id reused.
class CheckedIo : public proxy::GuestIo {
 public:
  CheckedIo(const Listener& l, uint64_t id, pid_t tid) : l_(l), id_(id), tid_(tid) {}
  bool Read(uint64_t addr, std::span<uint8_t> dst) override { return ReadGuest(tid_, addr, dst); }
  bool Write(uint64_t addr, std::span<const uint8_t> src) override {
    return l_.IdValid(id_) && WriteGuest(tid_, addr, src);
  }
  bool StillValid() override { return l_.IdValid(id_); }

 private:
  const Listener& l_;
  uint64_t id_;
  pid_t tid_;
};

class ParkedIoctl : public hostshim::Continuation {
 public:
  ParkedIoctl(const Listener& l, uint64_t id, pid_t tid, std::string_view what,
              std::vector<uint8_t> arg, proxy::Finisher finish)
      : l_(l), id_(id), tid_(tid), what_(what), arg_(std::move(arg)), finish_(std::move(finish)) {
    GlobalParkStats().parked++;
  }
  std::span<uint8_t> arg() override { return arg_; }

  void Finish(abi::NvError err) override {
    if (done_.exchange(true)) return;
    CheckedIo io(l_, id_, tid_);
    int e = finish_(arg_, err, io);
    bool sent = e == 0 ? l_.Return(id_, 0) : l_.Fail(id_, e);
    if (sent) GlobalParkStats().finished++;
    else Drop("finished after its thread went away");
  }

  bool Abandoned() override {
    if (done_.load()) return true;
    if (!l_.IdValid(id_)) {
      if (!done_.exchange(true)) Drop("its thread went away");
      return true;
    }
    PendingSignals p;
    if (!ReadPendingSignals(tid_, &p) || (p.thread | p.process) == 0) return false;
    if (done_.exchange(true)) return true;
    // A thread-directed signal: restart semantics, as an interrupted driver wait has. A
    // process-directed one may be taken by another thread, so only EINTR is safe to report.
    l_.Fail(id_, p.thread != 0 ? kErestartSys : EINTR);
    GlobalParkStats().interrupted++;
    NVS_LOG_LIMITED(spdlog::level::debug, "{} of thread {}: interrupted by a signal", what_, tid_);
    return true;
  }

 private:
  void Drop(const char* why) {
    GlobalParkStats().dropped++;
    NVS_LOG_LIMITED(spdlog::level::debug, "dropped parked {} of thread {}: {}", what_, tid_, why);
  }
  const Listener& l_;
  const uint64_t id_;
  const pid_t tid_;
  const std::string_view what_;  // a catalogue name: static storage
  std::vector<uint8_t> arg_;
  proxy::Finisher finish_;
  std::atomic<bool> done_{false};
};

uint64_t ParseMask(const char* line, const char* key) {
  size_t n = strlen(key);
  if (strncmp(line, key, n) != 0) return 0;
  return strtoull(line + n, nullptr, 16);
}

}  // namespace

ParkStats& GlobalParkStats() {
  static ParkStats stats;
  return stats;
}

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
  return std::make_shared<ParkedIoctl>(listener_, id_, tid_, what, std::move(arg),
                                       std::move(finish));
}

int NotifyCall::PlaceFd(int fd, bool cloexec) { return listener_.AddFd(id_, fd, cloexec); }

bool ReadPendingSignals(pid_t tid, PendingSignals* out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  uint64_t thread = 0, shared = 0, blocked = 0, ignored = 0;
  for (char* line = buf; line && *line;) {
    char* next = strchr(line, '\n');
    if (next) *next++ = 0;
    thread |= ParseMask(line, "SigPnd:");
    shared |= ParseMask(line, "ShdPnd:");
    blocked |= ParseMask(line, "SigBlk:");
    ignored |= ParseMask(line, "SigIgn:");
    line = next;
  }
  out->thread = thread & ~blocked & ~ignored;
  out->process = shared & ~blocked & ~ignored;
  return true;
}

}  // namespace nvsentry::sentry

namespace nvsentry::sentry {

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
