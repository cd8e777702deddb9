#include "hostshim/host/frozen_ranges.h"

#include <algorithm>
#include <iterator>

namespace nvsentry::hostshim::host {

bool FreezeBudget::Take() {
  size_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used >= limit_) return false;
  } while (!used_.compare_exchange_weak(used, used + 1, std::memory_order_relaxed));
  return true;
}

FrozenRanges::~FrozenRanges() {
  if (budget_ != nullptr) budget_->Give(count_);
}

absl::Status FrozenRanges::Add(uint64_t begin, uint64_t end,
                               const std::shared_ptr<FreezeHold>& hold) {
  if (begin >= end) return absl::OkStatus();
  // The hold being checked is the newest: look from the back.
  auto held =
      std::find_if(held_.rbegin(), held_.rend(), [&](const Held& h) { return h.hold == hold; });
  if (held != held_.rend()) {
    absl::btree_map<uint64_t, uint64_t>& r = held->ranges;
    auto it = r.upper_bound(begin);
    if (it != r.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= end) return absl::OkStatus();  // already frozen
      if (prev->second >= begin) it = prev;              // touches: fold from it
    }
    if (it != r.end() && it->first <= end) {
      // Folds into what it touches: never more ranges than before.
      begin = std::min(begin, it->first);
      size_t folded = 0;
      while (it != r.end() && it->first <= end) {
        end = std::max(end, it->second);
        it = r.erase(it);
        ++folded;
      }
      r.emplace(begin, end);
      count_ -= folded - 1;
      if (budget_ != nullptr) budget_->Give(folded - 1);
      return absl::OkStatus();
    }
  }
  if (count_ >= kMaxRanges)
    return absl::ResourceExhaustedError("too many frozen pushbuffer ranges in one object");
  if (budget_ != nullptr && !budget_->Take())
    return absl::ResourceExhaustedError("too many frozen pushbuffer ranges");
  if (held == held_.rend()) {
    held_.push_back({hold, {}});
    held_.back().ranges.emplace(begin, end);
  } else {
    held->ranges.emplace(begin, end);
  }
  ++count_;
  return absl::OkStatus();
}

size_t FrozenRanges::Prune(absl::FunctionRef<bool(FreezeHold&)> thawed) {
  size_t dropped = 0;
  std::erase_if(held_, [&](const Held& h) {
    if (!thawed(*h.hold)) return false;
    dropped += h.ranges.size();
    return true;
  });
  count_ -= dropped;
  if (budget_ != nullptr) budget_->Give(dropped);
  return dropped;
}

std::vector<FrozenRanges::Interval> FrozenRanges::Union() const {
  std::vector<Interval> all;
  all.reserve(count_);
  for (const Held& h : held_)
    for (const auto& [b, e] : h.ranges) all.push_back({b, e});
  std::sort(all.begin(), all.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : all) {
    if (!out.empty() && i.begin <= out.back().end)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace nvsentry::hostshim::host
