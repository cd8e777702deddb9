// Device sessions and the fds that refer to them.
//
// The guest holds, for each open of a device, the write end of a pipe the sentry made (never a
// host device fd). The same open file travels with dup, fork, exec and SCM_RIGHTS like any other
// fd, and the kernel tells the sentry when the last copy anywhere is closed: the read end, which
// the sentry keeps, hangs up. Then the session ends.
//
// Identity on each trapped ioctl costs one syscall on the fast path: a per-thread cache maps the
// guest's (thread, fd number) to a session, and kcmp(KCMP_EPOLL_TFD) confirms that the guest fd is
// still that session's open file (each session registers its pipe end in an epoll instance of its
// own, which holds no reference to it). A miss costs one stat of /proc/TID/fd/N, matched by the
// pipe's inode.
#pragma once

#include <sys/types.h>

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
  SessionTable();
  ~SessionTable();

  // A guest-side fd for a new session, registered before the guest can see it. The caller places
  // it in the guest, then calls Placed() (or Abandon() if placing failed).
  struct Pending {
    hostshim::UniqueFd guest_end;  // sentry's copy of the fd to place in the guest
    int slot;
  };
  absl::StatusOr<Pending> Create(std::shared_ptr<proxy::Session> session);
  // Both close the sentry's copy of the guest end.
  void Placed(Pending& p);
  void Abandon(Pending& p);

  // The session guest fd `fd` of thread `tid` refers to, or nullptr if it is not a session.
  std::shared_ptr<proxy::Session> Lookup(pid_t tid, int fd);

  size_t size() const;
  // For the kHoldOpenAfterPlacing test hook: waits until the session in `slot` has ended.
  void WaitUntilEnded(int slot, absl::Duration patience);
  // Ends every session now (the guest is gone and nvsentry is about to exit) and waits, up to
  // `patience`, until every session this table made has finished ending, wherever its end runs:
  // here, on the lifetime thread (a hang-up it took just before), or on a worker that held the
  // last reference for a call. So what their ends do (trace records, released budgets) happens
  // before the process ends, not never. The number of sessions still not ended (0 normally).
  int EndAll(absl::Duration patience = absl::Seconds(10));
  // For tests and benchmarks: which identity check the fast path uses.
  bool kcmp_available() const { return kcmp_ok_; }

 private:
  struct Entry {
    std::shared_ptr<proxy::Session> session;
    hostshim::UniqueFd slot;  // the session's own epoll fd; its number names the entry
    int tfd;                  // the number the guest end had when registered in the slot
    hostshim::UniqueFd
        keep_end;  // read end of the pipe: hangs up when the guest's last copy closes
    ino_t ino;
  };

  std::shared_ptr<proxy::Session> SlowLookup(pid_t tid, int fd, int* slot);
  void LifetimeLoop();
  void End(int slot);

  // How many sessions made by Create have not finished ending. Each session's WhenGone holds it,
  // so it outlives the table.
  struct Census {
    absl::Mutex mu;
    int alive ABSL_GUARDED_BY(mu) = 0;
  };
  std::shared_ptr<Census> census_ = std::make_shared<Census>();

  mutable absl::Mutex mu_;
  absl::flat_hash_map<int, Entry> by_slot_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<ino_t, int> by_ino_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int, int> by_keep_end_ ABSL_GUARDED_BY(mu_);
  dev_t pipefs_dev_ = 0;
  pid_t self_ = 0;
  bool kcmp_ok_ = false;
  bool end_all_started_ ABSL_GUARDED_BY(mu_) = false;
  hostshim::UniqueFd lifetime_epoll_;
  hostshim::UniqueFd stop_fd_;
  std::thread lifetime_;
};

}  // namespace nvsentry::sentry
