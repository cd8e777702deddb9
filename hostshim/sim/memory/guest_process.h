// A guest process whose memory backs nvmap objects ("OS-described memory"): the GPU reads and
// writes it directly with process_vm_readv/writev. A pidfd taken when the process first becomes
// an nvmap client tells when the process has exited, so a recycled pid is never read or written.
// That pidfd is a sentry fd held for the guest: the nvmap client's is charged to open_fds.
//
// Liveness: every access (one call, however many segments it has) polls the pidfd first (one
// cheap syscall) and again afterwards; a read is discarded, and a write reported failed, if the
// process died meanwhile, so a read never returns another process's bytes.
//
// The pid-reuse window: process_vm_readv/writev name the process by pid, and a write cannot be
// undone. Its residual race is a guest process that exits, is reaped and has its pid handed to a
// new process, all between the first poll and the kernel's pid lookup in process_vm_writev (a
// few microseconds). How that is contained (docs/security.md, "Launcher"):
// - the guest cannot choose the new owner of a host pid: its user namespace holds no capability
//   over the host's PID namespace, so clone3's set_tid and ns_last_pid there are refused
//   (tests/hostile: privilege_guest's set_tid); pids are handed out cyclically, so a given pid
//   comes back only after the host has used up the rest of its pid space (pid_max);
// - a root-started sentry drops its capabilities and takes the guest's filesystem ids once the
//   guest runs (sentry/sandbox/identity.h, DropHostCapabilities): what it may still write is the
//   guest, processes of the other user namespaces its uid owns, and processes of its own uid that
//   hold no capability. A recycled pid that went to any other host process gets EPERM.
// What remains: a recycled pid that lands in one of those (another nvsentry's guest, say), or,
// for an unprivileged sentry, in another process of the same user (whose memory that user can
// write anyway).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::sim {

class GuestProcess {
 public:
  // The process `tgid` (sentry's PID namespace), or null if it is already gone. With `budget`
  // the pidfd is charged to its open_fds until this object goes; when that budget is spent the
  // answer is null and *refused (if given) is InsufficientMemory.
  static std::shared_ptr<GuestProcess> Open(pid_t tgid, BudgetAccount* budget = nullptr,
                                            abi::NvError* refused = nullptr);
  ~GuestProcess();
  GuestProcess(const GuestProcess&) = delete;
  GuestProcess& operator=(const GuestProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Readable (EPOLLIN) once the process exits; owned here, valid for this object's life.
  int pidfd() const { return pidfd_.get(); }
  // False once the process has exited (its memory can no longer be reached).
  bool Alive() const;
  // Whole copies or nothing: false when the process is gone or any byte is not mapped in it
  // (a failed Write may have written a prefix).
  // Large copies go in as few syscalls as the kernel allows (up to IOV_MAX segments each).
  bool Read(uint64_t addr, std::span<uint8_t> dst) const;
  bool Write(uint64_t addr, std::span<const uint8_t> src) const;
  // Many segments at once: remote[i] in the guest to/from local[i] here (same lengths).
  bool ReadV(std::span<const iovec> local, std::span<const iovec> remote) const;
  bool WriteV(std::span<const iovec> local, std::span<const iovec> remote) const;
  // True when every page of [addr, addr+len) is readable in the process right now. `addr` need
  // not be page aligned. Anonymous private memory the process may read (its /proc/PID/maps) is
  // taken as readable without a read: reading it would map the shared zero page into every
  // untouched page, and every later scan of the touched pages (TouchedPages) would then walk
  // them all. Everything else (files, devices, maps unreadable) is read a byte a page, IOV_MAX
  // pages per syscall.
  bool Mapped(uint64_t addr, uint64_t len) const;
  // Asks the kernel to back the 2 MiB-aligned part of [addr, addr+len) with huge pages
  // (process_madvise MADV_COLLAPSE): the contents stay as they are, but process_vm_readv/writev
  // then pin one page per 2 MiB instead of 512. 0, or the errno (EPERM without CAP_SYS_NICE,
  // EINVAL on kernels before 6.1 or where THP is off). Slow (it copies): not on a guest's call.
  int CollapseHugePages(uint64_t addr, uint64_t len) const;
  // The page-aligned address ranges of [addr, addr+len) (`addr` page aligned) whose pages the
  // process touched: present (not as the shared zero page) or swapped out. Every other page is one
  // the process never wrote since it was mapped: it reads as zero. From /proc/PID/pagemap, whose
  // flags any process that may read the memory may read: PAGEMAP_SCAN where the kernel has it
  // (6.7 on), else the flags page by page (4.2 on), where a page only read counts as touched.
  // nullopt when the kernel will not tell (pagemap unreadable, the process gone). The pagemap fd
  // is kept after the first call, charged to open_fds (when that is spent, opened per call).
  struct Range {
    uint64_t begin, end;
  };
  std::optional<std::vector<Range>> TouchedPages(uint64_t addr, uint64_t len) const;
  // Tests: read the pagemap's flags even where PAGEMAP_SCAN exists (the older kernels' way).
  void set_force_pagemap_read(bool on) { force_pagemap_read_ = on; }

  // What this object has cost so far, for tests that check how accesses are batched: liveness
  // checks (pidfd polls) and process_vm_readv/writev calls.
  struct Counts {
    uint64_t liveness_checks = 0;
    uint64_t transfers = 0;
  };
  Counts counts() const;

 private:
  // The parts of page-aligned [first, end) that /proc/PID/maps does not show as anonymous private
  // readable memory (all of it when a hole or an unreadable mapping meets it); nullopt when the
  // maps cannot be read.
  std::optional<std::vector<Range>> Unproven(uint64_t first, uint64_t end) const;
  // One byte read from each of `pages` pages from `first`: false at the first that fails.
  bool ReadEachPage(uint64_t first, uint64_t pages) const;
  GuestProcess(pid_t pid, int pidfd, BudgetAccount* budget)
      : pid_(pid), pidfd_(pidfd), budget_(budget) {}
  bool Transfer(bool write, std::span<const iovec> local, std::span<const iovec> remote) const;
  pid_t pid_;
  UniqueFd pidfd_;
  BudgetAccount* budget_;  // charged one open_fds for pidfd_ (and one for pagemap_), or null
  mutable absl::Mutex pagemap_mu_;
  mutable UniqueFd pagemap_ ABSL_GUARDED_BY(pagemap_mu_);
  mutable bool pagemap_charged_ ABSL_GUARDED_BY(pagemap_mu_) = false;
  std::atomic<bool> force_pagemap_read_{false};
  mutable std::atomic<uint64_t> liveness_checks_{0};
  mutable std::atomic<uint64_t> transfers_{0};
};

}  // namespace nvsentry::hostshim::sim
