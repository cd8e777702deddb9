#include "sentry/guest_init.h"

#include "sentry/fd_passing.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nvsentry::sentry {
namespace {

[[noreturn]] void Fail(int control_fd, const char* what, int err) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  SendWithFd(control_fd, msg, -1);
  _exit(125);
}

void SendListener(int control_fd, int listener, bool killable) {
  if (!SendWithFd(control_fd, killable ? "ok:killable" : "ok", listener)) _exit(125);
}

[[noreturn]] void ExecGuest(const GuestInitArgs& a) {
  sigprocmask(SIG_SETMASK, &a.guest_sigmask, nullptr);
  execvp(a.argv[0], a.argv);
  int err = errno;
  fprintf(stderr, "nvsentry: %s: %s\n", a.argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

}  // namespace

void RunGuestInit(const GuestInitArgs& a) {
  // If the sentry dies, so does init, and with it the whole PID namespace.
  prctl(PR_SET_PDEATHSIG, SIGKILL);

  // Our mounts stay ours; the host's later mounts still show up here.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    Fail(a.control_fd, "making / a slave mount", errno);
  for (const HostNode& n : a.host_nodes) {
    int rc = n.is_dir ? mount("nvsentry", n.path.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NOEXEC,
                              "size=4k,mode=0755")
                      : mount("/dev/null", n.path.c_str(), nullptr, MS_BIND, nullptr);
    // A node that vanished since the scan has nothing left to hide.
    if (rc != 0 && errno != ENOENT) Fail(a.control_fd, ("hiding host node " + n.path).c_str(), errno);
  }
  // A /proc of this PID namespace: host processes (and their /proc/PID/root views of the
  // uncovered /dev) are not reachable from the guest.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    Fail(a.control_fd, "mounting /proc for the guest", errno);

  bool killable = false;
  int listener = LoadGuestFilter(*a.filter, &killable);
  if (listener < 0) Fail(a.control_fd, "installing the seccomp filter", -listener);
  SendListener(a.control_fd, listener, killable);
  close(listener);
  close(a.control_fd);

  // The sentry blocked these before cloning us; init takes them synchronously.
  sigset_t wait_set;
  sigemptyset(&wait_set);
  sigaddset(&wait_set, SIGCHLD);
  for (int s : kForwardedSignals) sigaddset(&wait_set, s);

  pid_t guest = fork();
  if (guest < 0) {
    int st = (125 << 8);  // reported as exit status 125
    (void)!write(a.status_fd, &st, sizeof st);
    _exit(125);
  }
  if (guest == 0) {
    close(a.status_fd);
    ExecGuest(a);
  }
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&wait_set, &si);
    if (sig < 0) continue;
    if (sig == SIGCHLD) {
      int st;
      pid_t p;
      while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        if (p == guest) {
          (void)!write(a.status_fd, &st, sizeof st);
          _exit(0);
        }
      }
      continue;
    }
    // Forward only what the sentry sent (a sender outside this namespace shows as pid 0); the
    // terminal's own signals already reached the guest, which shares our process group.
    if (si.si_code == SI_USER && si.si_pid == 0) kill(guest, sig);
  }
}

}  // namespace nvsentry::sentry
