#include "hostshim/host/object_mirror.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::hostshim::host {
namespace {

// The first index at or after `i` where a and b differ (or n). Word at a time: most of an object
// is unchanged between two syncs.
size_t NextDiff(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  while (i < n && (i % 8) != 0 && a[i] == b[i]) ++i;
  while (i + 8 <= n) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) break;
    i += 8;
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The first index at or after `i` where a and b agree (or n). Word at a time too: a page the
// CPU rewrote differs in nearly every byte (byte at a time, this loop was most of a push).
size_t NextSame(const uint8_t* a, const uint8_t* b, size_t i, size_t n) {
  constexpr uint64_t kLow = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  while (i < n && (i % 8) != 0 && a[i] != b[i]) ++i;
  while (i + 8 <= n) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    const uint64_t v = x ^ y;
    if (((v - kLow) & ~v & kHigh) != 0) break;  // some byte of v is zero: an equal byte
    i += 8;
  }
  while (i < n && a[i] != b[i]) ++i;
  return i;
}

constexpr uint64_t kPage = ObjectMirror::kPage;
constexpr uint8_t kZero[kPage] = {};

// The calling thread's chunk buffer, `n` <= ObjectMirror::kChunk bytes of it: allocated once
// per thread and never zeroed, since a fresh MiB per sync (zeroed, and faulted in page by page)
// cost a MiB-sized object's sync as much as its compare.
std::span<uint8_t> Scratch(size_t n) {
  thread_local std::unique_ptr<uint8_t[]> buf;
  if (buf == nullptr) buf.reset(new uint8_t[ObjectMirror::kChunk]);
  return {buf.get(), n};
}

bool AllZero(const uint8_t* p, size_t n) {
  return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

using Interval = ObjectSide::Interval;

// Adds [b, e) to sorted, disjoint `v`, folding it into the last interval when they touch.
void Append(std::vector<Interval>& v, uint64_t b, uint64_t e) {
  if (!v.empty() && v.back().end >= b) {
    v.back().end = std::max(v.back().end, e);
    return;
  }
  v.push_back({b, e});
}

// `v` rounded up to a whole page.
uint64_t RoundUp(uint64_t v) { return (v + kPage - 1) / kPage * kPage; }

// The union of two sorted, disjoint interval lists, clipped to [0, size).
std::vector<Interval> Union(std::span<const Interval> a, std::span<const Interval> b,
                            uint64_t size) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& n =
        j == b.size() || (i < a.size() && a[i].begin <= b[j].begin) ? a[i++] : b[j++];
    if (n.begin >= size) continue;
    Append(out, n.begin, std::min(n.end, size));
  }
  return out;
}

// Calls `run(begin, end)` for each maximal run of bytes of data[0, n) that differ from the
// agreed bytes; the chunk starts at object offset `off`, and `page(index)` is the agreed page
// `index` (kPage bytes). Runs continue across page boundaries.
template <typename PageFn, typename RunFn>
absl::Status ForEachDiff(const uint8_t* data, size_t n, uint64_t off, PageFn page, RunFn run) {
  size_t rb = 0, re = 0;
  bool open = false;
  for (size_t s = 0; s < n;) {
    const uint64_t in_page = (off + s) % kPage;
    const size_t len = std::min<size_t>(n - s, kPage - in_page);
    const uint8_t* a = page((off + s) / kPage) + in_page;
    const uint8_t* d = data + s;
    for (size_t i = NextDiff(d, a, 0, len); i < len; i = NextDiff(d, a, i, len)) {
      const size_t end = NextSame(d, a, i, len);
      if (open && re == s + i) {
        re = s + end;
      } else {
        if (open)
          if (absl::Status st = run(rb, re); !st.ok()) return st;
        rb = s + i;
        re = s + end;
        open = true;
      }
      i = end;
    }
    s += len;
  }
  if (open) return run(rb, re);
  return absl::OkStatus();
}

}  // namespace

ObjectMirror::~ObjectMirror() {
  if (pages_budget_ != nullptr && !pages_.empty()) pages_budget_->Give(kept_bytes());
}

const uint8_t* ObjectMirror::Agreed(uint64_t index) const {
  auto it = pages_.find(index);
  return it == pages_.end() ? kZero : it->second.get();
}

bool ObjectMirror::Prepare(uint64_t off, std::span<const uint8_t> data, uint64_t* reserve,
                           bool force) {
  for (uint64_t a = off; a < off + data.size();) {
    const uint64_t index = a / kPage;
    const uint64_t stop = std::min(off + data.size(), (index + 1) * kPage);
    if (!pages_.contains(index) && !AllZero(data.data() + (a - off), stop - a)) {
      if (*reserve >= kPage) {
        *reserve -= kPage;
      } else if (pages_budget_ != nullptr) {
        if (force)
          pages_budget_->Force(kPage);
        else if (!pages_budget_->Take(kPage))
          return false;
      }
      pages_.emplace(index, std::make_unique<uint8_t[]>(kPage));  // zeroed
    }
    a = stop;
  }
  return true;
}

void ObjectMirror::Copy(uint64_t off, std::span<const uint8_t> data) {
  for (uint64_t a = off; a < off + data.size();) {
    const uint64_t index = a / kPage;
    const uint64_t stop = std::min(off + data.size(), (index + 1) * kPage);
    auto it = pages_.find(index);
    if (it != pages_.end()) {
      memcpy(it->second.get() + (a - index * kPage), data.data() + (a - off), stop - a);
      if (AllZero(it->second.get(), kPage)) {  // zero on both sides again: costs nothing
        pages_.erase(it);
        if (pages_budget_ != nullptr) pages_budget_->Give(kPage);
      }
    }
    a = stop;
  }
}

std::optional<std::vector<Interval>> ObjectSide::TouchedIn(Interval within) {
  std::optional<std::vector<Interval>> all = Touched();
  if (!all) return std::nullopt;
  std::vector<Interval> out;
  for (const Interval& i : *all)
    if (std::max(i.begin, within.begin) < std::min(i.end, within.end))
      out.push_back({std::max(i.begin, within.begin), std::min(i.end, within.end)});
  return out;
}

std::vector<Interval> ObjectMirror::PushScan(ObjectSide& guest) const {
  std::optional<std::vector<Interval>> touched = guest.Touched();
  if (!touched) return {{0, size_}};
  std::vector<Interval> kept;
  for (const auto& [index, _] : pages_) Append(kept, index * kPage, (index + 1) * kPage);
  return Union(*touched, kept, size_);
}

absl::StatusOr<uint64_t> ObjectMirror::Reserve(ObjectSide& guest, std::span<const Interval> scan) {
  if (pages_budget_ == nullptr) return 0;
  uint64_t bound = 0;
  for (const Interval& iv : scan)
    for (uint64_t p = iv.begin / kPage; p * kPage < iv.end; ++p)
      if (!pages_.contains(p)) bound += kPage;
  if (bound == 0 || pages_budget_->Take(bound)) return bound;
  // Too many pages touched for the pessimistic charge: count those the guest made other than
  // zero (pages it only read, say, cost nothing).
  uint64_t need = 0;
  std::span<uint8_t> buf = Scratch(std::min<uint64_t>(kChunk, size_));
  for (const Interval& iv : scan) {
    for (uint64_t off = iv.begin; off < iv.end; off += kChunk) {
      const size_t n = std::min<uint64_t>(kChunk, iv.end - off);
      if (absl::Status s = guest.Read(off, {buf.data(), n}); !s.ok()) return s;
      for (size_t ps = 0; ps < n; ps += kPage)
        if (!pages_.contains((off + ps) / kPage) &&
            !AllZero(buf.data() + ps, std::min<size_t>(kPage, n - ps)))
          need += kPage;
    }
  }
  if (need == 0 || pages_budget_->Take(need)) return need;
  return absl::ResourceExhaustedError(
      absl::StrCat("twin_bytes: the guest's touched GPU memory would pass its budget (", need,
                   " more bytes); raise [budgets] twin_bytes in the policy"));
}

absl::StatusOr<SyncCounts> ObjectMirror::Push(ObjectSide& guest, ObjectSide& host) {
  if (!agreed_) return FirstPush(guest, host);
  return PushOver(guest, host, PushScan(guest));
}

absl::StatusOr<SyncCounts> ObjectMirror::PushOver(ObjectSide& guest, ObjectSide& host,
                                                  std::span<const Interval> scan) {
  absl::StatusOr<uint64_t> reserved = Reserve(guest, scan);
  if (!reserved.ok()) return reserved.status();
  uint64_t reserve = *reserved;
  absl::Cleanup give_back = [&] {
    if (reserve != 0) pages_budget_->Give(reserve);
  };
  SyncCounts counts;
  if (absl::Status s = Move(guest, host, scan, &counts, &reserve, false); !s.ok()) return s;
  return counts;
}

absl::StatusOr<SyncCounts> ObjectMirror::Push(ObjectSide& guest, ObjectSide& host,
                                              std::span<const Interval> where) {
  if (!agreed_) return FirstPush(guest, host);
  for (const Interval& i : where)
    if (i.begin >= i.end || i.end > size_) return absl::OutOfRangeError("outside the object");
  // Within each range: the guest's touched pages and the agreed copy's that it meets.
  std::vector<Interval> scan;
  for (const Interval& w : where) {
    std::optional<std::vector<Interval>> touched = guest.TouchedIn(w);
    if (!touched) {
      Append(scan, w.begin / kPage * kPage, std::min(RoundUp(w.end), size_));
      continue;
    }
    std::vector<Interval> kept;
    for (auto it = pages_.lower_bound(w.begin / kPage);
         it != pages_.end() && it->first * kPage < w.end; ++it)
      Append(kept, it->first * kPage, (it->first + 1) * kPage);
    // Whole pages of the touched and kept ones the range meets: Reserve counts what a push may
    // add page by page (a part of a page read would hide the rest of it from the count).
    for (const Interval& i : Union(*touched, kept, size_)) {
      const uint64_t from = std::max(i.begin, w.begin), to = std::min(i.end, w.end);
      if (from < to) Append(scan, from / kPage * kPage, std::min(RoundUp(to), size_));
    }
  }
  return PushOver(guest, host, scan);
}

absl::StatusOr<SyncCounts> ObjectMirror::FirstPush(ObjectSide& guest, ObjectSide& host) {
  // The host's bytes are unknown (a host need not hand out zeroed memory): it is read whole and
  // written where it differs from the guest, whose untouched pages are zero without a read.
  std::optional<std::vector<Interval>> touched = guest.Touched();
  const std::vector<Interval> whole{{0, size_}};
  const std::vector<Interval>& from = touched ? *touched : whole;
  absl::StatusOr<uint64_t> reserved = Reserve(guest, from);
  if (!reserved.ok()) return reserved.status();
  uint64_t reserve = *reserved;
  absl::Cleanup give_back = [&] {
    if (reserve != 0) pages_budget_->Give(reserve);
  };
  std::vector<uint8_t> g(std::min<uint64_t>(kChunk, size_)), h(g.size());
  SyncCounts counts;
  size_t t = 0;  // the first touched interval that may reach the current chunk
  absl::Status failed;
  for (uint64_t off = 0; off < size_ && failed.ok(); off += kChunk) {
    const size_t n = std::min<uint64_t>(kChunk, size_ - off);
    if (failed = host.Read(off, {h.data(), n}); !failed.ok()) break;
    memset(g.data(), 0, n);
    while (t < from.size() && from[t].end <= off) ++t;
    for (size_t k = t; k < from.size() && from[k].begin < off + n && failed.ok(); ++k) {
      const uint64_t a = std::max(off, from[k].begin), b = std::min(off + n, from[k].end);
      failed = guest.Read(a, {g.data() + (a - off), b - a});
      counts.bytes_read += b - a;
    }
    if (!failed.ok()) break;
    failed = ForEachDiff(
        g.data(), n, off, [&](uint64_t i) { return h.data() + i * kPage - off; },
        [&](size_t a, size_t b) {
          counts.bytes_moved += b - a;
          ++counts.writes;
          return host.Write(off + a, {g.data() + a, b - a});
        });
    if (!failed.ok()) break;
    for (size_t ps = 0; ps < n; ps += kPage) {
      std::span<const uint8_t> page(g.data() + ps, std::min<size_t>(kPage, n - ps));
      if (AllZero(page.data(), page.size())) continue;
      if (!Prepare(off + ps, page, &reserve, false)) {
        failed = absl::ResourceExhaustedError("twin_bytes: the guest's memory changed meanwhile");
        break;
      }
      Copy(off + ps, page);
    }
  }
  if (!failed.ok()) {  // nothing is agreed: the next push starts over
    if (pages_budget_ != nullptr && !pages_.empty()) pages_budget_->Give(kept_bytes());
    pages_.clear();
    return failed;
  }
  agreed_ = true;
  return counts;
}

absl::StatusOr<SyncCounts> ObjectMirror::Pull(ObjectSide& guest, ObjectSide& host) {
  const Interval whole{0, size_};
  return Pull(guest, host, {&whole, 1});
}

absl::StatusOr<SyncCounts> ObjectMirror::Pull(ObjectSide& guest, ObjectSide& host,
                                              std::span<const Interval> where) {
  SyncCounts counts;
  if (!agreed_ || where.empty()) return counts;
  for (const Interval& i : where)
    if (i.begin >= i.end || i.end > size_) return absl::OutOfRangeError("outside the object");
  uint64_t reserve = 0;
  if (absl::Status s = Move(host, guest, where, &counts, &reserve, true); !s.ok()) return s;
  return counts;
}

absl::Status ObjectMirror::ReadAgreed(uint64_t offset, std::span<uint8_t> out) const {
  if (!agreed_) return absl::FailedPreconditionError("nothing agreed yet");
  if (out.size() > size_ || offset > size_ - out.size())
    return absl::OutOfRangeError("outside the object");
  for (uint64_t a = offset; a < offset + out.size();) {
    const uint64_t index = a / kPage;
    const uint64_t stop = std::min<uint64_t>(offset + out.size(), (index + 1) * kPage);
    memcpy(out.data() + (a - offset), Agreed(index) + (a - index * kPage), stop - a);
    a = stop;
  }
  return absl::OkStatus();
}

absl::Status ObjectMirror::Move(ObjectSide& from, ObjectSide& to, std::span<const Interval> scan,
                                SyncCounts* counts, uint64_t* reserve, bool force) {
  uint64_t widest = 0;  // a pull of a few semaphores needs no chunk of a MiB
  for (const Interval& iv : scan) widest = std::max(widest, iv.end - iv.begin);
  std::span<uint8_t> buf = Scratch(std::min({kChunk, size_, widest}));
  // Writes [a, b) of the chunk at `off` (object offsets).
  const auto write = [&](uint64_t off, std::span<const uint8_t> chunk, uint64_t a,
                         uint64_t b) -> absl::Status {
    std::span<const uint8_t> run = chunk.subspan(a - off, b - a);
    if (!Prepare(a, run, reserve, force))
      return absl::ResourceExhaustedError("twin_bytes: the guest's memory changed meanwhile");
    if (absl::Status s = to.Write(a, run); !s.ok()) return s;
    Copy(a, run);
    counts->bytes_moved += b - a;
    ++counts->writes;
    return absl::OkStatus();
  };
  for (const Interval& iv : scan) {
    for (uint64_t off = iv.begin; off < iv.end; off += kChunk) {
      const size_t n = std::min<uint64_t>(kChunk, iv.end - off);
      std::span<uint8_t> chunk(buf.data(), n);
      if (absl::Status s = from.Read(off, chunk); !s.ok()) return s;
      counts->bytes_read += n;
      if (absl::Status s = ForEachDiff(
              chunk.data(), n, off, [&](uint64_t i) { return Agreed(i); },
              [&](size_t a, size_t b) { return write(off, chunk, off + a, off + b); });
          !s.ok())
        return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace nvsentry::hostshim::host
