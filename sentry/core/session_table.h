// Device sessions and the fds that refer to them. The guest holds, for each open of a device,
// one open file that the sentry can recognise (never a host device fd). The same open file
// travels with dup, fork, exec and SCM_RIGHTS like any other fd, and the session ends when the
// last copy anywhere is closed. The open file is one of two kinds:
//   - a device file (sentry/devfs/device_fs.h): the guest opened it itself; its filesystem tells
//   the
//     session its handle at OPEN and ends it at RELEASE;
//   - with trapped opens, the write end of a pipe the sentry made and placed in the guest; the
//     read end, which the sentry keeps, hangs up when the last copy is closed.
//
// Identity on each trapped ioctl costs one syscall on the fast path: a cache maps the guest's
// (thread, fd number) to a session, and kcmp(KCMP_EPOLL_TFD) confirms that the guest fd is
// still that session's open file (each session registers its open file in an epoll instance of
// its own, which holds no reference to it). A miss costs one stat of /proc/TID/fd/N: a pipe is
// matched by its inode; a device file is fetched (pidfd_getfd) and asked its handle, once per
// guest thread and fd, and the first time any thread uses it its epoll instance is made.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hostshim/unique_fd.h"
#include "proxy/session.h"

namespace nvsentry::sentry {

class SessionTable {
 public:
  // Device files' handles (AddFile) start here; pipes' slots are fd numbers, always below.
  static constexpr uint64_t kFirstFileSlot = uint64_t{1} << 32;

  SessionTable();
  ~SessionTable();

  // A guest-side fd for a new session, registered before the guest can see it. The caller places
  // it in the guest, then calls Placed() (or Abandon() if placing failed).
  struct Pending {
    hostshim::UniqueFd guest_end;  // sentry's copy of the fd to place in the guest
    uint64_t slot;
  };
  absl::StatusOr<Pending> Create(std::shared_ptr<proxy::Session> session);
  // Both close the sentry's copy of the guest end.
  void Placed(Pending& p);
  void Abandon(Pending& p);

  // A session for an open of a device file; its handle (never 0), or an error when the sentry
  // cannot keep it. `first_seen` runs once, with the table locked (so before any call through
  // another fd of the session is served): with the thread and fd of the session's first call, or
  // with (0, -1) when it ends before any.
  absl::StatusOr<uint64_t> AddFile(std::shared_ptr<proxy::Session> session,
                                   std::function<void(pid_t, int)> first_seen);
  void EndFile(uint64_t handle);
  // The device files' st_dev (0: there are none).
  void SetDeviceFiles(dev_t dev) { device_files_dev_ = dev; }

  // The session guest fd `fd` of thread `tid` refers to, or nullptr if it is not a session.
  std::shared_ptr<proxy::Session> Lookup(pid_t tid, int fd);

  size_t size() const;
  // For the kHoldOpenAfterPlacing test hook: waits until the session in `slot` has ended.
  void WaitUntilEnded(uint64_t slot, absl::Duration patience);
  // Ends every session now (the guest is gone and nvsentry is about to exit) and waits, up to
  // `patience`, until every session this table made has finished ending, wherever its end runs:
  // here, on the lifetime thread (a hang-up it took just before), or on a worker that held the
  // last reference for a call. So what their ends do (trace records, released budgets) happens
  // before the process ends, not never. The number of sessions still not ended (0 normally).
  int EndAll(absl::Duration patience = absl::Seconds(10));
  // For tests and benchmarks: which identity check the fast path uses.
  bool kcmp_available() const { return kcmp_ok_; }

 private:
  // Keyed by its slot: a pipe's by its epoll fd's number, a device file's by its handle (from
  // kFirstFileSlot up, so the two never meet).
  struct Entry {
    std::shared_ptr<proxy::Session> session;
    // The session's own epoll fd (a device file's: once first seen); shared with lookups in
    // flight, which keep it open.
    std::shared_ptr<const hostshim::UniqueFd> anchor;
    int tfd = -1;  // the number the open file had in the sentry when registered
    // A pipe's read end, which hangs up when the guest's last copy of the write end closes, and
    // the pipe's inode.
    hostshim::UniqueFd keep_end;
    ino_t ino = 0;
    std::function<void(pid_t, int)> first_seen;  // a device file's, until it runs
  };

  std::shared_ptr<proxy::Session> SlowLookup(pid_t tid, int fd, uint64_t* slot);
  std::shared_ptr<proxy::Session> LookupFile(pid_t tid, int fd, uint64_t* slot);
  void LifetimeLoop();
  // `closed`: the guest closed its last copy (the lifetime thread, or a device file's RELEASE).
  void End(uint64_t slot, bool closed = false);

  // How many sessions made by Create have not finished ending. Each session's WhenGone holds it,
  // so it outlives the table.
  struct Census {
    absl::Mutex mu;
    int alive ABSL_GUARDED_BY(mu) = 0;
  };
  std::shared_ptr<Census> census_ = std::make_shared<Census>();

  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Entry> by_slot_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<ino_t, uint64_t> by_ino_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int, uint64_t> by_keep_end_ ABSL_GUARDED_BY(mu_);
  uint64_t next_file_slot_ ABSL_GUARDED_BY(mu_) = kFirstFileSlot;
  // (tid, fd) -> slot, as last seen by any thread: a guess kcmp confirms. Bounded (emptied when
  // full); a wrong or missing guess costs only the slow path.
  absl::flat_hash_map<uint64_t, uint64_t> known_ ABSL_GUARDED_BY(mu_);
  static constexpr size_t kKnownLimit = 4096;
  dev_t pipefs_dev_ = 0;
  dev_t device_files_dev_ = 0;
  pid_t self_ = 0;
  bool kcmp_ok_ = false;
  bool end_all_started_ ABSL_GUARDED_BY(mu_) = false;
  hostshim::UniqueFd lifetime_epoll_;
  hostshim::UniqueFd stop_fd_;
  bool lifetime_started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread lifetime_;  // started with the first pipe to watch (Placed)
};

}  // namespace nvsentry::sentry
