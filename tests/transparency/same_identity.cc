// Runs a program natively (no sentry, no other namespace) under the identity `nvsentry run` gives
// its guest by default (sentry/sandbox/identity.h): root in a user namespace of its own, mapped to
// nobody when started by root and to the caller otherwise, with no_new_privs. The transparency
// suite runs its native side through it, so that outcomes that depend on privileges (uid 0 whose
// capabilities end at its namespace, files it may not write) compare like with like.
//
//   same_identity -- PROGRAM [ARGS...]   exits with PROGRAM's status (128+N for signal N)
//   same_identity --print                prints "UID GID", the host ids root inside maps to
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "sentry/sandbox/identity.h"

int main(int argc, char** argv) {
  using nvsentry::sentry::GuestIdentity;
  absl::StatusOr<GuestIdentity> id = nvsentry::sentry::ChooseGuestIdentity({});
  if (!id.ok()) {
    fprintf(stderr, "same_identity: %s\n", std::string(id.status().message()).c_str());
    return 125;
  }
  if (argc == 2 && strcmp(argv[1], "--print") == 0) {
    printf("%u %u\n", id->host_uid, id->host_gid);
    return 0;
  }
  int first = 1;
  if (first < argc && strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    fprintf(stderr, "usage: same_identity [--print] [--] PROGRAM [ARGS...]\n");
    return 125;
  }
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return 125;
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    fprintf(stderr, "same_identity: cannot create a user namespace: %s\n", strerror(errno));
    return 125;
  }
  if (pid == 0) {
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(125);
    if (const char* what = nvsentry::sentry::BecomeGuestRoot(*id)) {
      fprintf(stderr, "same_identity: %s: %s\n", what, strerror(errno));
      _exit(125);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    execvp(argv[first], argv + first);
    fprintf(stderr, "same_identity: %s: %s\n", argv[first], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  close(go[0]);
  if (absl::Status s = nvsentry::sentry::WriteIdMaps(static_cast<pid_t>(pid), *id); !s.ok()) {
    fprintf(stderr, "same_identity: %s\n", std::string(s.message()).c_str());
    kill(static_cast<pid_t>(pid), SIGKILL);
    return 125;
  }
  (void)!write(go[1], "g", 1);
  close(go[1]);
  // Only the program's fate counts: this process shares its group, so a test's kill(0, ...) must
  // not end (or stop) it and, by PDEATHSIG, the program. The harness ends leftovers with SIGKILL.
  for (int sig = 1; sig < SIGRTMIN; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD && sig != SIGCONT) signal(sig, SIG_IGN);
  int st = 0;
  while (waitpid(static_cast<pid_t>(pid), &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st);
}
