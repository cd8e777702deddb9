#include "hostshim/sim/memory/guest_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <string>
#include <string_view>

namespace nvsentry::hostshim::sim {
namespace {

constexpr size_t kBatch = IOV_MAX;
constexpr uint64_t kPage = 4096;

// PAGEMAP_SCAN (Linux 6.7, include/uapi/linux/fs.h; the C library's headers here predate it):
// the pages of a range by category, as ranges, walking only the page tables that exist.
struct PageRegion {
  uint64_t start, end, categories;
};
struct PmScanArg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
      category_mask, category_anyof_mask, return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPageIsPresent = 1 << 3, kPageIsSwapped = 1 << 4, kPageIsPfnZero = 1 << 5;

void AppendRange(std::vector<GuestProcess::Range>& v, uint64_t b, uint64_t e) {
  if (!v.empty() && v.back().end == b)
    v.back().end = e;
  else
    v.push_back({b, e});
}

// Present or swapped but not the shared zero page (what a read of an untouched page maps: the
// sentry's own range check at ALLOC reads every page). nullopt where the kernel has no
// PAGEMAP_SCAN.
std::optional<std::vector<GuestProcess::Range>> ScanTouched(int fd, uint64_t addr, uint64_t len) {
  std::vector<GuestProcess::Range> out;
  std::array<PageRegion, 256> vec;
  for (uint64_t at = addr; at < addr + len;) {
    PmScanArg a{};
    a.size = sizeof a;
    a.start = at;
    a.end = addr + len;
    a.vec = reinterpret_cast<uint64_t>(vec.data());
    a.vec_len = vec.size();
    a.category_inverted = kPageIsPfnZero;
    a.category_mask = kPageIsPfnZero;
    a.category_anyof_mask = kPageIsPresent | kPageIsSwapped;
    a.return_mask = kPageIsPresent | kPageIsSwapped;
    const long n = ioctl(fd, kPagemapScan, &a);
    if (n < 0) return std::nullopt;
    for (long i = 0; i < n; ++i) AppendRange(out, vec[i].start, vec[i].end);
    if (a.walk_end <= at) return std::nullopt;  // no progress: do not loop
    at = a.walk_end;
  }
  return out;
}

}  // namespace

std::shared_ptr<GuestProcess> GuestProcess::Open(pid_t tgid, BudgetAccount* budget,
                                                 abi::NvError* refused) {
  if (tgid <= 0) return nullptr;
  if (budget != nullptr && budget->Charge(BudgetKind::kOpenFds) != abi::NvError::kSuccess) {
    if (refused != nullptr) *refused = abi::NvError::kInsufficientMemory;
    return nullptr;
  }
  int fd = static_cast<int>(syscall(SYS_pidfd_open, tgid, 0));
  if (fd < 0) {
    if (budget != nullptr) budget->Release(BudgetKind::kOpenFds);
    return nullptr;
  }
  // From here the object owns the fd and the charge.
  auto p = std::shared_ptr<GuestProcess>(new GuestProcess(tgid, fd, budget));
  // pidfd_open on a zombie succeeds; such a process has no memory left to back anything.
  if (!p->Alive()) return nullptr;
  return p;
}

GuestProcess::~GuestProcess() {
  if (budget_ != nullptr) budget_->Release(BudgetKind::kOpenFds);
  absl::MutexLock l(&pagemap_mu_);
  if (pagemap_charged_) budget_->Release(BudgetKind::kOpenFds);
}

std::optional<std::vector<GuestProcess::Range>> GuestProcess::TouchedPages(uint64_t addr,
                                                                           uint64_t len) const {
  constexpr uint64_t kPresent = uint64_t{1} << 63, kSwapped = uint64_t{1} << 62;
  constexpr size_t kEntries = 8192;  // 32 MiB of the process's memory per read
  if (addr % kPage != 0) return std::nullopt;
  absl::MutexLock l(&pagemap_mu_);
  UniqueFd once;
  int fd = pagemap_.get();
  if (fd < 0) {
    const std::string path = "/proc/" + std::to_string(pid_) + "/pagemap";
    UniqueFd opened(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    // The fd names the memory of the process that had the pid at open: this one only if it is
    // still alive after the open.
    if (!opened || !Alive()) return std::nullopt;
    if (budget_ == nullptr || budget_->Charge(BudgetKind::kOpenFds) == abi::NvError::kSuccess) {
      pagemap_charged_ = budget_ != nullptr;
      pagemap_ = std::move(opened);
      fd = pagemap_.get();
    } else {
      once = std::move(opened);
      fd = once.get();
    }
  }
  if (!force_pagemap_read_)
    if (std::optional<std::vector<Range>> r = ScanTouched(fd, addr, len)) return r;
  // Older kernels (L4T's 4.9 to 5.15): the pagemap's flags, 8 bytes a page. The zero page cannot
  // be told apart there without CAP_SYS_ADMIN (its frame number is hidden), so a page the
  // process only read counts as touched: more is compared, nothing is missed.
  std::vector<Range> out;
  std::vector<uint64_t> e(kEntries);
  const uint64_t pages = (len + kPage - 1) / kPage;
  for (uint64_t p = 0; p < pages;) {
    const size_t n = std::min<uint64_t>(kEntries, pages - p);
    const ssize_t r = pread(fd, e.data(), n * 8, static_cast<off_t>((addr / kPage + p) * 8));
    if (r != static_cast<ssize_t>(n * 8)) return std::nullopt;
    for (size_t i = 0; i < n; ++i) {
      if ((e[i] & (kPresent | kSwapped)) == 0) continue;
      const uint64_t b = addr + (p + i) * kPage;
      AppendRange(out, b, b + kPage);
    }
    p += n;
  }
  return out;
}

bool GuestProcess::Alive() const {
  liveness_checks_.fetch_add(1, std::memory_order_relaxed);
  pollfd p{pidfd_.get(), POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r == 0;
}

bool GuestProcess::Transfer(bool write, std::span<const iovec> local,
                            std::span<const iovec> remote) const {
  if (local.size() != remote.size()) return false;
  for (size_t i = 0; i < local.size(); ++i)
    if (local[i].iov_len != remote[i].iov_len) return false;
  if (!Alive()) return false;
  const size_t n = local.size();
  size_t i = 0;     // first segment not finished
  size_t done = 0;  // bytes of segment i already moved (the kernel may stop mid-segment)
  std::array<iovec, kBatch> l, r;
  for (;;) {
    while (i < n && local[i].iov_len == done) {
      ++i;
      done = 0;
    }
    if (i == n) break;
    size_t k = 0;
    for (size_t j = i; j < n && k < kBatch; ++j) {
      const size_t skip = j == i ? done : 0;
      const size_t len = local[j].iov_len - skip;
      if (len == 0) continue;
      l[k] = {static_cast<uint8_t*>(local[j].iov_base) + skip, len};
      r[k] = {static_cast<uint8_t*>(remote[j].iov_base) + skip, len};
      ++k;
    }
    transfers_.fetch_add(1, std::memory_order_relaxed);
    ssize_t got = write ? process_vm_writev(pid_, l.data(), k, r.data(), k, 0)
                        : process_vm_readv(pid_, l.data(), k, r.data(), k, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    // A short count means a fault (or the kernel's per-call cap); the next call resumes there
    // and fails with EFAULT if the page really is missing.
    size_t left = static_cast<size_t>(got);
    while (left > 0) {
      const size_t rem = local[i].iov_len - done;
      if (left >= rem) {
        left -= rem;
        ++i;
        done = 0;
      } else {
        done += left;
        left = 0;
      }
    }
  }
  // The pid was this process's for the whole copy only if it has not exited by now; a write to a
  // process that exited meanwhile fails (its memory is gone; the pid may be another's).
  return Alive();
}

bool GuestProcess::Read(uint64_t addr, std::span<uint8_t> dst) const {
  if (dst.empty()) return Alive();
  iovec l{dst.data(), dst.size()};
  iovec r{reinterpret_cast<void*>(addr), dst.size()};
  return Transfer(false, {&l, 1}, {&r, 1});
}

bool GuestProcess::Write(uint64_t addr, std::span<const uint8_t> src) const {
  if (src.empty()) return Alive();
  iovec l{const_cast<uint8_t*>(src.data()), src.size()};
  iovec r{reinterpret_cast<void*>(addr), src.size()};
  return Transfer(true, {&l, 1}, {&r, 1});
}

bool GuestProcess::ReadV(std::span<const iovec> local, std::span<const iovec> remote) const {
  return Transfer(false, local, remote);
}

bool GuestProcess::WriteV(std::span<const iovec> local, std::span<const iovec> remote) const {
  return Transfer(true, local, remote);
}

bool GuestProcess::Mapped(uint64_t addr, uint64_t len) const {
  if (len == 0) return Alive();
  if (addr + len < addr) return false;
  const uint64_t first = addr & ~(kPage - 1);
  const uint64_t end = (addr + len + kPage - 1) & ~(kPage - 1);
  if (end < first) return false;
  if (!Alive()) return false;
  // What /proc/PID/maps cannot vouch for is read a byte a page; the rest (anonymous private
  // memory the process may read) is not touched, so that its untouched pages stay unmapped.
  std::optional<std::vector<Range>> unproven = Unproven(first, end);
  if (!unproven) unproven = std::vector<Range>{{first, end}};
  for (const Range& r : *unproven)
    if (!ReadEachPage(r.begin, (r.end - r.begin) / kPage)) return false;
  return Alive();
}

std::optional<std::vector<GuestProcess::Range>> GuestProcess::Unproven(uint64_t first,
                                                                       uint64_t end) const {
  const std::string path = "/proc/" + std::to_string(pid_) + "/maps";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  const std::vector<Range> whole{{first, end}};
  std::vector<Range> unproven;
  uint64_t at = first;  // [first, at) is proven or listed
  // One line of the maps ("start-end perms offset dev inode [path]", sorted by address); false
  // once the rest is not needed: [first, end) is covered, or `settled` holds the answer (a hole
  // or an unreadable mapping: the reads decide).
  std::optional<std::vector<Range>> settled;
  const auto line = [&](std::string_view l) {
    unsigned long long b = 0, e = 0, inode = 0, offset = 0;
    char perms[5] = {}, dev[16] = {};
    int path_at = 0;
    const std::string copy(l);
    if (sscanf(copy.c_str(), "%llx-%llx %4s %llx %15s %llu %n", &b, &e, perms, &offset, dev, &inode,
               &path_at) < 6) {
      settled = whole;  // not the format: let the reads decide
      return false;
    }
    if (e <= at) return true;
    if (b > at || perms[0] != 'r') {  // a hole, or unreadable: the reads fail
      settled = whole;
      return false;
    }
    const std::string_view name = path_at > 0 ? l.substr(static_cast<size_t>(path_at)) : "";
    const bool anonymous =
        inode == 0 && perms[3] == 'p' &&
        (name.empty() || name == "[heap]" || name == "[stack]" || name.starts_with("[anon:"));
    const uint64_t to = std::min<uint64_t>(e, end);
    if (!anonymous) {
      if (!unproven.empty() && unproven.back().end == at)
        unproven.back().end = to;
      else
        unproven.push_back({at, to});
    }
    at = to;
    return at < end;
  };
  // Read as it comes, up to the line that settles [first, end): a guest with many mappings makes
  // a long file, and only the lines up to `end` matter.
  std::string pending;
  char buf[16384];
  bool more = true;
  while (more) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t from = 0;
    for (size_t stop; more && (stop = pending.find('\n', from)) != std::string::npos;
         from = stop + 1)
      more = line(std::string_view(pending).substr(from, stop - from));
    pending.erase(0, from);
  }
  // The maps file named the memory of the process that had the pid at the open.
  if (!Alive()) return std::nullopt;
  if (settled) return settled;
  if (at < end) return whole;
  return unproven;
}

bool GuestProcess::ReadEachPage(uint64_t first, uint64_t pages) const {
  std::array<uint8_t, kBatch> sink;
  std::array<iovec, kBatch> l, r;
  for (uint64_t p = 0; p < pages;) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kBatch, pages - p));
    for (size_t j = 0; j < k; ++j) {
      l[j] = {&sink[j], 1};
      r[j] = {reinterpret_cast<void*>(first + (p + j) * kPage), 1};
    }
    transfers_.fetch_add(1, std::memory_order_relaxed);
    ssize_t got = process_vm_readv(pid_, l.data(), k, r.data(), k, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(k)) return false;
    p += k;
  }
  return true;
}

GuestProcess::Counts GuestProcess::counts() const {
  return {liveness_checks_.load(std::memory_order_relaxed),
          transfers_.load(std::memory_order_relaxed)};
}

int GuestProcess::CollapseHugePages(uint64_t addr, uint64_t len) const {
  constexpr uint64_t kHuge = 2ull << 20;
  constexpr int kMadvCollapse = 25;  // MADV_COLLAPSE (Linux 6.1), absent from older headers
  if (addr + len < addr) return EINVAL;
  const uint64_t start = (addr + kHuge - 1) & ~(kHuge - 1);
  const uint64_t end = (addr + len) & ~(kHuge - 1);
  if (end <= start) return 0;
  if (!Alive()) return ESRCH;
  iovec r{reinterpret_cast<void*>(start), end - start};
  if (syscall(SYS_process_madvise, pidfd_.get(), &r, 1, kMadvCollapse, 0) < 0) return errno;
  return 0;
}

}  // namespace nvsentry::hostshim::sim
