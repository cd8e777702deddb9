#include "sentry/core/parked_call.h"

#include <cerrno>

#include "hostshim/rate_limited_log.h"
#include "sentry/core/guest_memory.h"
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

class ParkedIoctl : public hostshim::Continuation, public WatchedCall {
 public:
  ParkedIoctl(const Listener& l, ParkWatch& watch, uint64_t id, pid_t tid, std::string_view what,
              std::vector<uint8_t> arg, proxy::Finisher finish)
      : l_(l),
        watch_(watch),
        id_(id),
        tid_(tid),
        what_(what),
        arg_(std::move(arg)),
        finish_(std::move(finish)) {}
  ~ParkedIoctl() override {
    if (ticket_ != 0) watch_.Forget(ticket_);
  }

  // Before the continuation is shared.
  bool Charge(const std::shared_ptr<hostshim::BudgetAccount>& budget) {
    return hold_.Take(budget, hostshim::BudgetKind::kParkedWaits);
  }
  void StartWatch(std::weak_ptr<WatchedCall> self) {
    ticket_ = watch_.Watch(std::move(self), tid_);
  }

  std::span<uint8_t> arg() override { return arg_; }

  void Finish(abi::NvError err) override {
    if (done_.exchange(true)) return;
    CheckedIo io(l_, id_, tid_);
    int e = finish_(arg_, err, io);
    // Before the answer: a guest that parks again the moment it has it finds the charge back.
    hold_.Release();
    watch_.Forget(ticket_);
    const bool sent = e == 0 ? l_.Return(id_, 0) : l_.Fail(id_, e);
    if (!sent)
      NVS_LOG_LIMITED(spdlog::level::debug,
                      "dropped parked {} of thread {}: finished after its thread went away", what_,
                      tid_);
  }

  // The holder forgets the call once it ended here without it.
  bool Abandoned() override { return done_.load(std::memory_order_acquire); }

  bool Waiting() override { return !done_.load(std::memory_order_acquire); }
  bool StillPending() override { return l_.IdValid(id_); }

  void Interrupted(bool thread_directed) override {
    if (done_.exchange(true)) return;
    Ended();
    // A thread-directed signal: restart semantics, as an interrupted driver wait has. A
    // process-directed one may be taken by another thread, so only EINTR is safe to report.
    l_.Fail(id_, thread_directed ? kErestartSys : EINTR);
    NVS_LOG_LIMITED(spdlog::level::debug, "{} of thread {}: interrupted by a signal", what_, tid_);
  }

  void Gone() override {
    if (done_.exchange(true)) return;
    Ended();
    NVS_LOG_LIMITED(spdlog::level::debug, "dropped parked {} of thread {}: its thread went away",
                    what_, tid_);
  }

 private:
  // An end the holder did not cause: the charge goes back now (before any answer), the holder
  // forgets the call at its next look (hostshim::NoteAbandonedCall); the watch lets go of it
  // itself.
  void Ended() {
    hold_.Release();
    hostshim::NoteAbandonedCall();
  }

  const Listener& l_;
  ParkWatch& watch_;
  const uint64_t id_;
  const pid_t tid_;
  const std::string_view what_;  // a catalogue name: static storage
  std::vector<uint8_t> arg_;
  proxy::Finisher finish_;
  hostshim::BudgetHold hold_;
  uint64_t ticket_ = 0;
  std::atomic<bool> done_{false};
};

}  // namespace

std::shared_ptr<hostshim::Continuation> ParkCall(const Listener& listener, const Parking& parking,
                                                 uint64_t id, pid_t tid, std::string_view what,
                                                 std::vector<uint8_t> arg, proxy::Finisher finish) {
  auto call = std::make_shared<ParkedIoctl>(listener, parking.watch, id, tid, what, std::move(arg),
                                            std::move(finish));
  if (!call->Charge(parking.budget)) {
    NVS_LOG_LIMITED(spdlog::level::debug,
                    "{} of thread {}: not parked, the parked_waits budget is spent", what, tid);
    return nullptr;
  }
  call->StartWatch(call);
  return call;
}

}  // namespace nvsentry::sentry
