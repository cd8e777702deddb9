#include "sentry/fake_l4t/fake_l4t_program.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "abi/ioctl_code.h"
#include "abi/l4t/nodes.h"
#include "hostshim/unique_fd.h"
#include "sentry/core/listener.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/fake_l4t/fake_l4t_caller.h"
#include "sentry/fake_l4t/fake_l4t_codes.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

using hostshim::UniqueFd;
using hostshim::fake_l4t::FakeJetson;
using hostshim::fake_l4t::L4tReply;
using hostshim::fake_l4t::L4tRequest;

// Threads receiving notifications. A trapped call is served on the thread that received it (an
// fd's identification waits for a FUSE thread, never for another of these).
constexpr int kServingThreads = 4;

// The filter: every code of FdHandingCodes() on ioctl traps; everything else is allowed. Built
// before the fork (libseccomp allocates).
bool BuildFilter(std::vector<sock_filter>* out) {
  scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
  if (c == nullptr) return false;
  bool ok = true;
  for (uint32_t code : FdHandingCodes())
    ok = ok && seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, code)) == 0;
  const int mem = memfd_create("fake-l4t-bpf", MFD_CLOEXEC);
  ok = ok && mem >= 0 && seccomp_export_bpf(c, mem) == 0;
  seccomp_release(c);
  const off_t len = ok ? lseek(mem, 0, SEEK_END) : -1;
  ok = len > 0 && len % sizeof(sock_filter) == 0;
  if (ok) {
    out->resize(static_cast<size_t>(len) / sizeof(sock_filter));
    ok = pread(mem, out->data(), static_cast<size_t>(len), 0) == len;
  }
  if (mem >= 0) close(mem);
  return ok;
}

// The caller of a trapped call: FakeL4tCaller's memory and fd identification, and the fds the
// fake hands out, opened on DIR's files and placed in the caller with ADDFD.
class ProgramCaller : public FakeL4tCaller {
 public:
  ProgramCaller(const Listener& listener, uint64_t id, pid_t tid, dev_t dev, const std::string& dir)
      : FakeL4tCaller(tid, dev), listener_(listener), id_(id), dir_(dir) {}
  int OpenNode(abi::l4t::L4tNode node, uint64_t* session) override {
    const std::string path = dir_ + std::string(abi::l4t::Node(node).path.substr(4));
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) return -errno;
    const int64_t h = IdentifyDeviceFile(fd.get());
    if (h <= 0) return h < 0 ? static_cast<int>(h) : -EIO;
    *session = static_cast<uint64_t>(h);
    return fd.Release();
  }
  int PlaceFd(int fd, bool cloexec) override { return listener_.AddFd(id_, fd, cloexec); }

 private:
  const Listener& listener_;
  const uint64_t id_;
  const std::string& dir_;
};

// Answers a trapped call as the kernel answers an ioctl: the argument's outputs copied back on
// success (EFAULT when they cannot be), the errno otherwise.
class ProgramReply : public L4tReply {
 public:
  ProgramReply(const Listener& listener, uint64_t id, pid_t tid, uint64_t arg)
      : listener_(listener), id_(id), caller_(tid, 0), arg_(arg) {}
  void Send(int err, std::span<const uint8_t> out) override {
    if (sent_) return;
    sent_ = true;
    if (err == 0 && !out.empty() && !caller_.Write(arg_, out)) err = EFAULT;
    if (err != 0)
      listener_.Fail(id_, err);
    else
      listener_.Return(id_, 0);
  }
  bool Abandoned() override { return !listener_.IdValid(id_); }

 private:
  const Listener& listener_;
  const uint64_t id_;
  FakeL4tCaller caller_;
  const uint64_t arg_;
  bool sent_ = false;
};

struct Server {
  const std::string& dir;
  dev_t dev;
  FakeJetson& fake;
  Listener listener;
};

void ServeOne(Server& s, const seccomp_notif& n) {
  const int fd = static_cast<int>(n.data.args[0]);
  const auto code = static_cast<uint32_t>(n.data.args[1]);
  const uint64_t arg = n.data.args[2];
  ProgramCaller caller(s.listener, n.id, static_cast<pid_t>(n.pid), s.dev, s.dir);
  const uint64_t session = caller.SessionOf(fd);
  if (session == 0) {  // not an open of DIR's files: not the fake's call
    s.listener.Continue(n.id);
    return;
  }
  const uint32_t size = abi::IocSize(code);
  const abi::Dir dir = abi::IocDir(code);
  std::vector<uint8_t> in(abi::DirHasIn(dir) ? size : 0);
  if (!in.empty() && !caller.Read(arg, in)) {
    s.listener.Fail(n.id, EFAULT);
    return;
  }
  const L4tRequest r{code, in, arg, abi::DirHasOut(dir) ? size : 0u, caller};
  s.fake.Ioctl(session, r,
               std::make_shared<ProgramReply>(s.listener, n.id, static_cast<pid_t>(n.pid), arg));
}

void ServeLoop(Server& s) {
  for (;;) {
    seccomp_notif n;
    const int err = s.listener.Receive(&n);
    if (err == ENOENT || err == EINTR) continue;
    if (err != 0) return;  // no task uses the filter any more
    ServeOne(s, n);
  }
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void StartChild(const std::vector<sock_filter>& prog, char* const* argv, int report) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the fake's blocked signals are its own
  sock_fprog fprog{static_cast<unsigned short>(prog.size()), const_cast<sock_filter*>(prog.data())};
  // Root needs no NO_NEW_PRIVS (CAP_SYS_ADMIN): PROGRAM keeps what exec would give it.
  if (geteuid() != 0) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  long lfd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
              SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fprog);
  if (lfd < 0 && errno == EINVAL)
    lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  int msg[2] = {static_cast<int>(lfd), lfd < 0 ? errno : 0};
  if (write(report, msg, sizeof msg) != sizeof msg || lfd < 0) _exit(1);
  char go = 0;
  // The parent has its copy of the listener (pidfd_getfd) once it says go.
  if (read(report, &go, 1) != 1) _exit(1);
  close(static_cast<int>(lfd));
  close(report);
  execvp(argv[0], argv);
  const int e = errno;
  _exit(e == ENOENT ? 127 : 126);
}

}  // namespace

int ServeProgram(const std::string& dir, dev_t dev, FakeJetson& fake,
                 const std::vector<std::string>& argv) {
  std::vector<sock_filter> prog;
  if (!BuildFilter(&prog)) {
    fprintf(stderr, "nvsentry fake-l4t: cannot build the seccomp filter (libseccomp)\n");
    return 1;
  }
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    perror("nvsentry fake-l4t: socketpair");
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) {
    perror("nvsentry fake-l4t: fork");
    return 1;
  }
  if (child == 0) {
    close(sv[0]);
    StartChild(prog, cargv.data(), sv[1]);
  }
  close(sv[1]);
  const UniqueFd report(sv[0]);
  int msg[2] = {-1, EIO};
  UniqueFd listener_fd;
  if (read(report.get(), msg, sizeof msg) == sizeof msg && msg[0] >= 0) {
    const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
    if (pidfd)
      listener_fd = UniqueFd(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), msg[0], 0)));
    if (!listener_fd) msg[1] = errno;
  }
  if (!listener_fd) {
    fprintf(stderr, "nvsentry fake-l4t: cannot serve %s: seccomp listener: %s\n", argv[0].c_str(),
            strerror(msg[1]));
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return 1;
  }
  auto* server = new Server{dir, dev, fake, Listener(listener_fd.Release())};  // lives on
  for (int i = 0; i < kServingThreads; ++i) std::thread([server] { ServeLoop(*server); }).detach();
  const char go = 1;
  (void)!write(report.get(), &go, 1);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace nvsentry::sentry
