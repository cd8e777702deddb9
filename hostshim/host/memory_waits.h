// The channel WAIT of the host backend: a wait for a semaphore value or a finished notifier in a
// guest object, which the host's GPU writes in the object's twin. The host's own WAIT would block
// the calling thread, so the wait parks in the sentry instead and one poll thread reads the twins'
// host side (every 20 us at first, backing off to 1 ms while nothing is met), as the simulated
// channel polls guest memory. A met wait is answered after guest memory is pulled (the guest sees
// what the GPU wrote); one past its deadline answers Timeout; one whose guest thread is gone is
// dropped. A notifier found finished gets the time stamped into the guest's copy of it, as the
// Linux driver stamps its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hostshim/backend.h"
#include "hostshim/host/twins.h"

namespace nvsentry::hostshim::host {

struct MemoryWaitCondition {
  uint32_t handle = 0;  // the twin's host handle, valid while `object` lives
  uint64_t offset = 0;
  bool semaphore = false;  // else a notifier record (16 bytes, status last)
  uint32_t payload = 0;    // the semaphore value waited for
  // The guest's object: once it is gone the wait is over (kGone; its twin, and so the handle, may
  // already be another object's), and a finished notifier's stamp goes into its guest memory, for
  // the next push to carry (through the twin's lock and its agreed copy), never
  // straight into the host object. Null (tests): nothing stamped.
  std::weak_ptr<sim::NvmapObject> object;
  bool has_object = false;
};

class MemoryWaits {
 public:
  static constexpr absl::Duration kMinPoll = absl::Microseconds(20);
  static constexpr absl::Duration kMaxPoll = absl::Milliseconds(1);
  static constexpr size_t kMaxParked = 1024;  // besides the guest's parked_waits budget

  enum class State { kMet, kNotYet, kGone };

  // `host` outlives this; `pull` brings the host's writes into guest memory.
  MemoryWaits(HostNvmap& host, std::function<void()> pull);
  ~MemoryWaits();  // answers Timeout to every wait still parked
  MemoryWaits(const MemoryWaits&) = delete;
  MemoryWaits& operator=(const MemoryWaits&) = delete;

  // Reads the condition on the host once (stamping a finished notifier).
  State Check(const MemoryWaitCondition& c);
  // Parks `call` until the condition is met or `deadline` passes.
  void Park(const MemoryWaitCondition& c, absl::Time deadline, std::shared_ptr<Continuation> call);
  size_t parked() const;

 private:
  struct Parked {
    MemoryWaitCondition cond;
    absl::Time deadline;
    std::shared_ptr<Continuation> call;
  };
  void PollLoop();

  HostNvmap& host_;
  std::function<void()> pull_;
  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  std::vector<Parked> parked_ ABSL_GUARDED_BY(mu_);
  bool fresh_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread poller_;
};

}  // namespace nvsentry::hostshim::host
