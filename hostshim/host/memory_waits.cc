#include "hostshim/host/memory_waits.h"

#include <time.h>

#include <algorithm>
#include <utility>

namespace nvsentry::hostshim::host {
namespace {

struct NotifierRecord {  // the GPU's notifier layout (hostshim/sim/engines/channel_engine.h)
  uint64_t timestamp_ns;
  uint32_t info32;
  uint16_t info16;
  uint16_t status;
};
static_assert(sizeof(NotifierRecord) == 16);

uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

}  // namespace

MemoryWaits::MemoryWaits(HostNvmap& host, std::function<void()> pull)
    : host_(host), pull_(std::move(pull)) {
  poller_ = std::thread([this] { PollLoop(); });
}

MemoryWaits::~MemoryWaits() {
  std::vector<Parked> left;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    wake_.Signal();
  }
  poller_.join();
  {
    absl::MutexLock l(&mu_);
    left.swap(parked_);
  }
  for (Parked& p : left) p.call->Finish(abi::NvError::kTimeout);
}

MemoryWaits::State MemoryWaits::Check(const MemoryWaitCondition& c) {
  std::shared_ptr<sim::NvmapObject> object = c.object.lock();
  if (c.has_object && object == nullptr) return State::kGone;  // freed: its handle is no longer it
  if (c.semaphore) {
    uint32_t v = 0;
    if (!host_.Read(c.handle, c.offset, {reinterpret_cast<uint8_t*>(&v), sizeof v}).ok())
      return State::kGone;
    return v == c.payload ? State::kMet : State::kNotYet;
  }
  NotifierRecord rec{};
  if (!host_.Read(c.handle, c.offset, {reinterpret_cast<uint8_t*>(&rec), sizeof rec}).ok())
    return State::kGone;
  if (rec.status != 0) return State::kNotYet;
  if (object != nullptr) {
    const uint64_t now = RealtimeNs();
    object->Write(c.offset, {reinterpret_cast<const uint8_t*>(&now), sizeof now});
  }
  return State::kMet;
}

void MemoryWaits::Park(const MemoryWaitCondition& c, absl::Time deadline,
                       std::shared_ptr<Continuation> call) {
  {
    absl::MutexLock l(&mu_);
    if (!stopping_ && parked_.size() < kMaxParked) {
      parked_.push_back(Parked{c, deadline, std::move(call)});
      fresh_ = true;
      wake_.Signal();
      return;
    }
  }
  call->Finish(abi::NvError::kBusy);
}

size_t MemoryWaits::parked() const {
  absl::MutexLock l(&mu_);
  return parked_.size();
}

void MemoryWaits::PollLoop() {
  absl::Duration interval = kMinPoll;
  absl::MutexLock l(&mu_);
  while (!stopping_) {
    if (parked_.empty()) {
      wake_.Wait(&mu_);
      interval = kMinPoll;
      continue;
    }
    if (fresh_) interval = kMinPoll;
    fresh_ = false;
    std::vector<Parked> mine;
    mine.swap(parked_);
    mu_.Unlock();
    std::vector<std::pair<std::shared_ptr<Continuation>, abi::NvError>> done;
    std::vector<Parked> keep;
    const absl::Time now = absl::Now();
    bool pulled = false;
    for (Parked& p : mine) {
      if (p.call->Abandoned()) continue;  // nobody to answer
      switch (Check(p.cond)) {
        case State::kMet:
          if (!pulled) pull_();  // once per sweep: before any met wait is answered
          pulled = true;
          done.emplace_back(std::move(p.call), abi::NvError::kSuccess);
          continue;
        case State::kGone:
          done.emplace_back(std::move(p.call), abi::NvError::kInvalidAddress);
          continue;
        case State::kNotYet: break;
      }
      if (now >= p.deadline)
        done.emplace_back(std::move(p.call), abi::NvError::kTimeout);
      else
        keep.push_back(std::move(p));
    }
    for (auto& [call, err] : done) call->Finish(err);
    mu_.Lock();
    for (Parked& p : keep) parked_.push_back(std::move(p));
    interval = done.empty() ? std::min(interval * 2, kMaxPoll) : kMinPoll;
    if (!stopping_ && !fresh_ && !parked_.empty()) wake_.WaitWithTimeout(&mu_, interval);
  }
}

}  // namespace nvsentry::hostshim::host
