#include "sentry/fake_l4t/traced_call.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>
#include <vector>

#include "abi/ioctl_code.h"
#include "hostshim/unique_fd.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/fake_l4t/fake_l4t_caller.h"

namespace nvsentry::sentry {
namespace {

using hostshim::UniqueFd;
using hostshim::fake_l4t::L4tReply;
using hostshim::fake_l4t::L4tRequest;

// Keeps the answer for the tracer to set as the ioctl's result; the outputs go to the caller's
// argument at once (the caller is stopped).
class TracedReply : public L4tReply {
 public:
  TracedReply(pid_t tid, uint64_t arg) : caller_(tid, 0), arg_(arg) {}
  void Send(int err, std::span<const uint8_t> out) override {
    if (sent_) return;
    sent_ = true;
    if (err == 0 && !out.empty() && !caller_.Write(arg_, out)) err = EFAULT;
    err_ = err;
  }
  bool Abandoned() override { return false; }
  bool sent() const { return sent_; }
  int err() const { return err_; }

 private:
  FakeL4tCaller caller_;
  const uint64_t arg_;
  bool sent_ = false;
  int err_ = 0;
};

#if defined(__x86_64__)

constexpr uint64_t kRedZone = 128;    // the x86-64 ABI's: below the stack pointer, the callee's
constexpr uint64_t kSyscallInsn = 2;  // `syscall`

class TracedCaller : public FakeL4tCaller {
 public:
  TracedCaller(const TracedServer& s, pid_t tid, const user_regs_struct& regs)
      : FakeL4tCaller(tid, s.dev), s_(s), tid_(tid), saved_(regs) {}
  ~TracedCaller() override {
    if (copy_ >= 0) close(copy_);
  }

  // The caller opens the node itself (the call turned into openat); the fake gets a copy.
  int OpenNode(abi::l4t::L4tNode node, uint64_t* session) override {
    return OpenPath(abi::l4t::Node(node).path.substr(5), session);
  }
  int OpenHandleFile(uint64_t* session) override {
    return OpenPath(hostshim::fake_l4t::kHandleFileName, session);
  }
  int OpenEventFile(uint64_t* session) override {
    return OpenPath(hostshim::fake_l4t::kEventFileName, session);
  }
  // A dup in the caller (fcntl F_DUPFD(_CLOEXEC) in its place); the fake gets a copy.
  int DupFd(int32_t fd, bool cloexec) override {
    if (caller_fd_ >= 0) return -EBUSY;  // one fd per call
    const int64_t dup_fd =
        Inject(SYS_fcntl, {static_cast<uint64_t>(fd),
                           static_cast<uint64_t>(cloexec ? F_DUPFD_CLOEXEC : F_DUPFD), 0, 0});
    if (dup_fd < 0) return static_cast<int>(dup_fd);
    caller_fd_ = static_cast<int>(dup_fd);
    return CopyOfCallerFd();
  }
  int CloseFd(int32_t fd) override {
    return static_cast<int>(Inject(SYS_close, {static_cast<uint64_t>(fd)}));
  }
  // A new eventfd made by the caller itself (eventfd2 in its place); the fake gets a copy.
  int MakeEventFd() override {
    if (caller_fd_ >= 0) return -EBUSY;  // one fd per call
    const int64_t fd = Inject(SYS_eventfd2, {0, EFD_CLOEXEC, 0, 0});
    if (fd < 0) return static_cast<int>(fd);
    caller_fd_ = static_cast<int>(fd);
    return CopyOfCallerFd();
  }
  // The fd is the caller's already (OpenNode, MakeEventFd, DupFd); its close-on-exec flag is
  // set as the driver's fd has it.
  int PlaceFd(int fd, bool cloexec) override {
    if (caller_fd_ < 0 || copy_ < 0 || !SameFile(fd, copy_)) return -EBADF;
    const int64_t r = Inject(SYS_fcntl, {static_cast<uint64_t>(caller_fd_), F_SETFD,
                                         static_cast<uint64_t>(cloexec ? FD_CLOEXEC : 0), 0});
    if (r < 0) return static_cast<int>(r);
    placed_ = true;
    return caller_fd_;
  }

  // Resumes the caller with `result` as the ioctl's (an fd it made closed unless handed out by
  // a call that succeeded).
  void Finish(int64_t result) {
    if (gone_) return;
    if (caller_fd_ >= 0 && (!placed_ || result != 0))
      Inject(SYS_close, {static_cast<uint64_t>(caller_fd_)});
    if (gone_) return;
    user_regs_struct r = saved_;
    r.rax = static_cast<uint64_t>(result);
    if (!in_syscall_) r.orig_rax = static_cast<uint64_t>(-1);  // the ioctl never runs
    ptrace(PTRACE_SETREGS, tid_, 0, &r);
    ptrace(PTRACE_CONT, tid_, 0, pending_signal_);
  }

 private:
  // openat(DIR/name) by the caller, and the new open's session; the fake's copy, or -errno.
  int OpenPath(std::string_view name, uint64_t* session) {
    if (caller_fd_ >= 0) return -EBUSY;  // one fd per call
    const std::string path = s_.dir + "/" + std::string(name);
    const uint64_t at = (saved_.rsp - kRedZone - path.size() - 1) & ~uint64_t{15};
    if (!Write(at, {reinterpret_cast<const uint8_t*>(path.c_str()), path.size() + 1}))
      return -EFAULT;
    const int64_t fd = Inject(SYS_openat, {static_cast<uint64_t>(AT_FDCWD), at, O_RDWR, 0});
    if (fd < 0) return static_cast<int>(fd);
    caller_fd_ = static_cast<int>(fd);
    const int copy = CopyOfCallerFd();
    if (copy < 0) return copy;
    const int64_t h = IdentifyDeviceFile(copy);
    if (h <= 0) {
      close(copy);
      return h < 0 ? static_cast<int>(h) : -EIO;
    }
    *session = static_cast<uint64_t>(h);
    return copy;
  }

  // The fake's copy of caller_fd_ (and copy_, by which PlaceFd knows it), or -errno.
  int CopyOfCallerFd() {
    const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, TgidOf(tid_), 0)));
    UniqueFd copy(pidfd ? static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), caller_fd_, 0))
                        : -1);
    if (!copy) return -errno;
    copy_ = dup(copy.get());
    return copy.Release();
  }
  static bool SameFile(int a, int b) {
    struct stat sa {
    }, sb{};
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
  }

  // Runs system call `nr` in the stopped caller and waits for its end: its result (-errno).
  // From the seccomp stop the ioctl becomes the call; from a later exit stop the `syscall`
  // instruction runs once more.
  int64_t Inject(long nr, std::array<uint64_t, 4> a) {
    user_regs_struct r = saved_;
    if (in_syscall_) {
      r.rip -= kSyscallInsn;
      r.rax = static_cast<uint64_t>(nr);
    }
    r.orig_rax = static_cast<uint64_t>(nr);
    r.rdi = a[0];
    r.rsi = a[1];
    r.rdx = a[2];
    r.r10 = a[3];
    if (ptrace(PTRACE_SETREGS, tid_, 0, &r) != 0) return -errno;
    // From an exit stop: first the entry stop of the repeated instruction, then its exit stop.
    for (int stops = in_syscall_ ? 2 : 1; stops > 0; --stops)
      if (!ResumeToSyscallStop()) return -ESRCH;
    in_syscall_ = true;
    if (ptrace(PTRACE_GETREGS, tid_, 0, &r) != 0) return -errno;
    return static_cast<int64_t>(r.rax);
  }

  bool ResumeToSyscallStop() {
    if (ptrace(PTRACE_SYSCALL, tid_, 0, 0) != 0) return false;
    for (;;) {
      int st = 0;
      if (waitpid(tid_, &st, __WALL) < 0) {
        if (errno == EINTR) continue;
        gone_ = true;
        return false;
      }
      if (WIFEXITED(st) || WIFSIGNALED(st)) {
        gone_ = true;
        return false;
      }
      if (WSTOPSIG(st) == (SIGTRAP | 0x80)) return true;
      // A signal meanwhile is delivered when the call is done; another stop goes on.
      if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP) pending_signal_ = WSTOPSIG(st);
      if (ptrace(PTRACE_SYSCALL, tid_, 0, 0) != 0) return false;
    }
  }

  const TracedServer& s_;
  const pid_t tid_;
  const user_regs_struct saved_;
  bool in_syscall_ = false;  // stopped at a system call's exit (else at the ioctl's seccomp stop)
  bool gone_ = false;
  int pending_signal_ = 0;
  int caller_fd_ = -1;  // the fd OpenNode made in the caller
  int copy_ = -1;       // the fake's copy of it
  bool placed_ = false;
};

void Serve(const TracedServer& s, pid_t tid) {
  user_regs_struct regs{};
  if (ptrace(PTRACE_GETREGS, tid, 0, &regs) != 0) return;  // gone
  const int fd = static_cast<int>(regs.rdi);
  const auto code = static_cast<uint32_t>(regs.rsi);
  const uint64_t arg = regs.rdx;
  TracedCaller caller(s, tid, regs);
  const uint64_t session = caller.SessionOf(fd);
  if (session == 0) {  // not an open of DIR's files: not the fake's call
    ptrace(PTRACE_CONT, tid, 0, 0);
    return;
  }
  const uint32_t size = abi::IocSize(code);
  const abi::Dir dir = abi::IocDir(code);
  std::vector<uint8_t> in(abi::DirHasIn(dir) ? size : 0);
  if (!in.empty() && !caller.Read(arg, in)) return caller.Finish(-EFAULT);
  auto reply = std::make_shared<TracedReply>(tid, arg);
  const L4tRequest r{code, in, arg, abi::DirHasOut(dir) ? size : 0u, caller};
  s.fake.Ioctl(session, r, reply);
  // The codes traced are answered at once (none waits).
  caller.Finish(!reply->sent() ? -EIO : reply->err() != 0 ? -reply->err() : 0);
}

#else

void Serve(const TracedServer&, pid_t tid) {
  // Registers of another architecture: the call answers ENOTTY, as over FUSE alone.
  ptrace(PTRACE_CONT, tid, 0, 0);
}

#endif

}  // namespace

void ServeTracedCall(const TracedServer& server, pid_t tid) { Serve(server, tid); }

}  // namespace nvsentry::sentry
