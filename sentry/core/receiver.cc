#include "sentry/core/receiver.h"

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {

Receiver::Receiver(const Listener& listener, Options options, IsSlow is_slow, Serve serve,
                   std::function<void()> thread_start)
    : listener_(listener),
      options_(options),
      is_slow_(std::move(is_slow)),
      serve_(std::move(serve)),
      thread_start_(std::move(thread_start)) {}

void Receiver::Launch(std::function<void()> body) {
  std::thread([this, body = std::move(body)] {
    if (thread_start_) thread_start_();
    body();
  }).detach();
}

void Receiver::Start() {
  auto first = std::make_shared<Turn>();
  {
    absl::MutexLock lock(&mu_);
    current_ = first;
    receivers_ = 1;
  }
  // The pool's threads and the watch start when first needed (ReceiveLoop).
  Launch([this, first] { ReceiveLoop(first); });
}

void Receiver::ReceiveLoop(std::shared_ptr<Turn> turn) {
  seccomp_notif req;
  uint64_t seq = 0;
  while (!turn->retired.load(std::memory_order_acquire)) {
    int err = listener_.Receive(&req);
    // ENOENT: a call went away before it was received, or, at once and for good, the guest's
    // last task is gone (the listener hangs up): without this look, every receiving thread
    // would spin here while nvsentry tears down.
    if (err == ENOENT && listener_.HungUp()) err = EPIPE;
    if (err == ENOENT || err == EINTR) continue;
    if (err != 0) {
      spdlog::debug("listener closed: {}", strerror(err));
      absl::MutexLock lock(&mu_);
      closed_ = true;
      --receivers_;
      return;
    }
    if (is_slow_(req)) {
      handed_off_.fetch_add(1, std::memory_order_relaxed);
      bool start = false;
      {
        absl::MutexLock lock(&pool_mu_);
        queue_.push_back(req);
        // A call no free thread will take starts one more, up to the pool's size: each call waits
        // exactly as long as with the whole pool started at once.
        if (queue_.size() > static_cast<size_t>(pool_idle_) &&
            pool_started_ < options_.pool_threads) {
          ++pool_started_;
          ++pool_idle_;  // free from now on: calls queued before it runs wait for it
          start = true;
        }
      }
      if (start) Launch([this] { PoolLoop(); });
      continue;
    }
    // Inside a call: the watch may take over from here on. Sequentially consistent with the
    // watch's own store and load of watch_idle_, so that one of the two sees the other.
    turn->seq.store(++seq, std::memory_order_seq_cst);
    if (watch_idle_.load(std::memory_order_seq_cst)) {
      bool start = false;
      {
        absl::MutexLock lock(&mu_);
        watch_idle_.store(false);
        start = !watch_started_;
        watch_started_ = true;
      }
      // The first call served here: the watch starts before it, so that it sees this very call
      // if it stalls.
      if (start) Launch([this] { WatchLoop(); });
    }
    serve_(req);
    turn->seq.store(++seq, std::memory_order_release);
    served_inline_.fetch_add(1, std::memory_order_relaxed);
  }
  absl::MutexLock lock(&mu_);
  --receivers_;
}

void Receiver::PoolLoop() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pool_mu_) { return !queue_.empty(); };
  // Counted free from its launch (ReceiveLoop), then again each time it waits.
  for (bool counted = true;; counted = false) {
    seccomp_notif req;
    {
      absl::MutexLock lock(&pool_mu_);
      if (!counted) ++pool_idle_;
      pool_mu_.Await(absl::Condition(&ready));
      req = queue_.front();
      queue_.pop_front();
      --pool_idle_;
    }
    serve_(req);
  }
}

// Looks at the receiving threads every stall_after while calls run; sleeps while none does.
void Receiver::WatchLoop() {
  // No look yet: a value seq never takes (1, a turn's first call, made a look inside that call
  // take over at once).
  constexpr uint64_t kNoLook = ~uint64_t{0};
  uint64_t last = kNoLook;
  int backlog_looks = 0, apart_looks = 0;
  std::shared_ptr<Turn> watched;
  for (;;) {
    std::shared_ptr<Turn> turn, helper;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      turn = current_;
      helper = helper_;
    }
    if (turn != watched) {
      watched = turn;
      last = kNoLook;
    }
    const uint64_t seq = turn->seq.load(std::memory_order_seq_cst);
    const bool busy = (seq & 1) != 0;
    if (seq == last && busy) {
      if (!TakeOver(turn)) absl::SleepFor(options_.stall_after);
      continue;
    }
    if (seq == last) {
      // No call since the last look: one receiving thread suffices, and there is nothing to
      // watch until a call begins.
      RetireHelper();
      backlog_looks = apart_looks = 0;
      SleepUntilACallBegins(*turn, seq);
      last = kNoLook;
      continue;
    }
    last = seq;
    if (helper == nullptr) {
      backlog_looks = Backlogged(*turn, seq, busy) ? backlog_looks + 1 : 0;
      if (backlog_looks >= kBacklogLooks) {
        StartHelper();
        backlog_looks = 0;
      }
    } else {
      // Once the two no longer serve calls at the same time, one suffices again.
      apart_looks = BothServing(*turn, *helper, seq, busy) ? 0 : apart_looks + 1;
      if (apart_looks >= kApartLooks) {
        RetireHelper();
        apart_looks = 0;
      }
    }
    absl::SleepFor(options_.stall_after);
  }
}

void Receiver::SleepUntilACallBegins(const Turn& turn, uint64_t seq) {
  watch_idle_.store(true, std::memory_order_seq_cst);
  absl::MutexLock lock(&mu_);
  if (turn.seq.load(std::memory_order_seq_cst) == seq) {
    auto woken = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !watch_idle_.load() || closed_; };
    mu_.Await(absl::Condition(&woken));
  }
  watch_idle_.store(false);
}

bool Receiver::Backlogged(const Turn& turn, uint64_t seq, bool busy) const {
  // The receiver stayed inside the same call while another waited: more guest threads call than
  // one thread keeps up with.
  return busy && listener_.Pending() && turn.seq.load(std::memory_order_seq_cst) == seq;
}

bool Receiver::BothServing(const Turn& turn, const Turn& helper, uint64_t seq, bool busy) {
  return busy && (helper.seq.load(std::memory_order_seq_cst) & 1) != 0 &&
         turn.seq.load(std::memory_order_seq_cst) == seq;
}

void Receiver::StartHelper() {
  auto helper = std::make_shared<Turn>();
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || helper_ != nullptr || receivers_ >= options_.max_receivers) return;
    helper_ = helper;
    ++receivers_;
  }
  spdlog::debug("calls wait while the receiving thread serves others: a second thread receives");
  Launch([this, helper] { ReceiveLoop(helper); });
}

void Receiver::RetireHelper() {
  absl::MutexLock lock(&mu_);
  if (helper_ == nullptr) return;
  // It ends after the next call it receives (a thread blocked in RECV cannot be woken).
  helper_->retired.store(true, std::memory_order_release);
  helper_ = nullptr;
  spdlog::debug("one receiving thread suffices again");
}

bool Receiver::TakeOver(const std::shared_ptr<Turn>& stalled) {
  auto next = std::make_shared<Turn>();
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    if (receivers_ >= options_.max_receivers) {
      NVS_LOG_LIMITED(spdlog::level::warn,
                      "{} receiving threads are each held in a call: calls wait until one ends",
                      receivers_);
      return false;
    }
    stalled->retired.store(true, std::memory_order_release);
    current_ = next;
    ++receivers_;
    ++takeovers_;
  }
  NVS_LOG_LIMITED(spdlog::level::debug,
                  "a call held the receiving thread for over {}: another thread receives now",
                  absl::FormatDuration(options_.stall_after));
  Launch([this, next] { ReceiveLoop(next); });
  return true;
}

Receiver::Stats Receiver::stats() const {
  Stats s;
  s.served_inline = served_inline_.load(std::memory_order_relaxed);
  s.handed_off = handed_off_.load(std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  s.takeovers = takeovers_;
  return s;
}

}  // namespace nvsentry::sentry
