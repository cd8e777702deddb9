// The bytes of one twin that a push must not move (freeze_hold.h): for each hold (a submission
// whose check read them), the byte ranges it froze. A hold's adjacent and overlapping ranges fold
// into one, so a submission's entries laid one after another in a pushbuffer cost one range;
// ranges of different holds stay apart (each thaws at its own fence: folding them would keep a
// legitimate client's rewrites of a pushbuffer it waited for from the host until a later fence).
//
// A guest decides how many ranges it makes (every entry of every submission the host has not
// finished), so they are bounded: kMaxRanges per twin (the push's work on it) and a FreezeBudget
// for all the guest's twins together (the sentry's memory). Past either, Add refuses.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "hostshim/host/freeze_hold.h"

namespace nvsentry::hostshim::host {

// The ranges all of one guest's twins may hold together.
class FreezeBudget {
 public:
  explicit FreezeBudget(size_t limit) : limit_(limit) {}
  bool Take();
  void Give(size_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }
  size_t used() const { return used_.load(std::memory_order_relaxed); }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
};

class FrozenRanges {
 public:
  static constexpr size_t kMaxRanges = 4096;
  struct Interval {
    uint64_t begin, end;
  };
  // `budget` (may be null) outlives this.
  explicit FrozenRanges(FreezeBudget* budget) : budget_(budget) {}
  ~FrozenRanges();
  FrozenRanges(const FrozenRanges&) = delete;
  FrozenRanges& operator=(const FrozenRanges&) = delete;

  // Freezes [begin, end) under `hold`. ResourceExhausted past kMaxRanges or the budget (nothing
  // added then).
  absl::Status Add(uint64_t begin, uint64_t end, const std::shared_ptr<FreezeHold>& hold);
  // Drops the ranges of every hold `thawed` answers true for; how many ranges went.
  size_t Prune(absl::FunctionRef<bool(FreezeHold&)> thawed);
  // Every frozen byte, as sorted intervals that neither overlap nor touch.
  std::vector<Interval> Union() const;
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  struct Held {
    std::shared_ptr<FreezeHold> hold;
    absl::btree_map<uint64_t, uint64_t> ranges;  // begin -> end, disjoint, not touching
  };
  std::vector<Held> held_;
  size_t count_ = 0;
  FreezeBudget* const budget_;
};

}  // namespace nvsentry::hostshim::host
