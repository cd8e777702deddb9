#include "hostshim/sim/memory/guest_process.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>

namespace nvsentry::hostshim::sim {
namespace {

constexpr size_t kBatch = IOV_MAX;
constexpr uint64_t kPage = 4096;

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
  const uint64_t pages = (addr + len - first + kPage - 1) / kPage;
  if (!Alive()) return false;
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
  return Alive();
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
