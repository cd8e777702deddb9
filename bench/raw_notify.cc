// The raw round trip, written with the seccomp() system call and the listener's ioctls only, so
// that it shares no code with nvsentry: whatever nvsentry adds on top shows as the difference.
#include "bench/raw_notify.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "bench/timing.h"

// Older system headers lack these; the values are the kernel's ABI.
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace nvbench {
namespace {

// The code row 3 sends through nvsentry (SYNCPT_READ), so both rows run the same ioctl.
constexpr uint32_t kTrappedCode = 0xC0080014;
// The argument of the child's last trapped call, which tells the supervisor to stop. Sent as a
// value, never dereferenced: the supervisor answers without looking at guest memory.
constexpr unsigned long kStopArg = 0x5700;
// The argument of a call the supervisor receives and leaves pending (RawOptions::parked).
constexpr unsigned long kParkArg = 0x5701;
constexpr unsigned kWatchdogSeconds = 60;

// The low half of the 64-bit ioctl request register, where the kernel reads the code from.
constexpr uint32_t kRequestLowOffset =
    offsetof(seccomp_data, args[1]) + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0);

// Traps ioctl(_, kTrappedCode, _) and allows everything else. No architecture check: only this
// benchmark's own child runs under it, making native calls.
int InstallTrapFilter(bool* killable) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kRequestLowOffset),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kTrappedCode, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  // nvsentry asks for killable waits (Linux 5.19+) and falls back without them; so does the
  // floor, because the flag changes how the kernel waits for the answer.
  long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
              SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  *killable = fd >= 0;
  if (fd < 0 && errno == EINVAL)
    fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  return static_cast<int>(fd);
}

// One byte of payload (`tag`) with the fd attached as SCM_RIGHTS.
bool SendFd(int sock, int fd, char tag) {
  iovec iov{&tag, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1;
}

int ReceiveFd(int sock, char* tag) {
  iovec iov{tag, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

int g_park_target = -1;

void* ParkedCall(void*) {
  ioctl(g_park_target, kTrappedCode, kParkArg);  // never answered: the child exits under it
  return nullptr;
}

// The child: trap, hand the listener over, wait until the supervisor is set up, then time.
[[noreturn]] void RunChild(int sock, const RawOptions& o) {
  bool killable = false;
  int listener = InstallTrapFilter(&killable);
  if (listener < 0 || !SendFd(sock, listener, killable ? 'k' : 'p')) _exit(1);
  close(listener);
  // Any fd will do: the call never reaches a driver.
  int target = open("/dev/null", O_RDONLY | O_CLOEXEC);
  g_park_target = target;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (int i = 0; i < o.parked; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, ParkedCall, nullptr) != 0) _exit(1);
  }
  char go;  // sent once the supervisor holds every parked call
  if (read(sock, &go, 1) != 1) _exit(1);
  uint32_t arg[2] = {1, 0};
  auto ns = TimeBlocks(o.warmup, o.blocks, o.calls,
                       [&] { return ioctl(target, kTrappedCode, arg) == 0; });
  ioctl(target, kTrappedCode, kStopArg);  // even after a failure: the supervisor waits for it
  std::string report = ns ? FormatSamples(*ns) : "failed\n";
  ssize_t sent = write(sock, report.data(), report.size());
  _exit(sent == static_cast<ssize_t>(report.size()) ? 0 : 1);
}

volatile sig_atomic_t g_watchdog_fired = 0;

// A last resort against a child that dies without its stop call: RECV would wait forever (the
// zombie still holds the filter), so an alarm interrupts it. It never fires in a normal run.
class Watchdog {
 public:
  Watchdog() {
    g_watchdog_fired = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_watchdog_fired = 1; };
    sigaction(SIGALRM, &sa, &old_);  // no SA_RESTART: the point is to interrupt RECV
    alarm(kWatchdogSeconds);
  }
  ~Watchdog() {
    alarm(0);
    sigaction(SIGALRM, &old_, nullptr);
  }
  bool fired() const { return g_watchdog_fired != 0; }

 private:
  struct sigaction old_ {};
};

// What nvsentry does between RECV and SEND for a SYNCPT_READ. Which files kcmp compares does not
// matter (the listener stands in for nvsentry's session slot): the cost is the remote fd lookup.
void FastPathSyscalls(const seccomp_notif& req, int own_fd) {
  const pid_t tid = static_cast<pid_t>(req.pid);
  syscall(SYS_kcmp, tid, getpid(), KCMP_FILE, req.data.args[0], own_fd);
  uint32_t arg[2];
  iovec local{arg, sizeof arg};
  iovec remote{reinterpret_cast<void*>(req.data.args[2]), sizeof arg};
  process_vm_readv(tid, &local, 1, &remote, 1, 0);
  process_vm_writev(tid, &local, 1, &remote, 1, 0);
}

// The minimal supervisor: RECV, then SEND val=0 at once, until the child's stop call.
bool Serve(int listener, pid_t child, bool fast_path_syscalls, const Watchdog& watchdog) {
  seccomp_notif req;
  seccomp_notif_resp resp;
  for (;;) {
    memset(&req, 0, sizeof req);  // the kernel insists on a zeroed request
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
      if (watchdog.fired()) {
        kill(child, SIGKILL);
        return false;
      }
      if (errno == EINTR || errno == ENOENT) continue;
      return false;
    }
    if (req.data.args[2] == kParkArg) continue;  // left pending
    const bool stop = req.data.args[2] == kStopArg;
    if (fast_path_syscalls && !stop) FastPathSyscalls(req, listener);
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    if (stop) return true;
  }
}

// Receives the child's parked calls (the only calls it makes before "go") and keeps them pending.
bool ReceiveParked(int listener, int parked, const Watchdog& watchdog) {
  seccomp_notif req;
  for (int held = 0; held < parked;) {
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
      ++held;
    } else if (watchdog.fired() || (errno != EINTR && errno != ENOENT)) {
      return false;
    }
  }
  return true;
}

std::string ReadReport(int sock) {
  char buf[4096];
  ssize_t n = read(sock, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

RawResult MeasureRawRoundTrip(const RawOptions& options) {
  RawResult result;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return result;
  pid_t child = fork();
  if (child == 0) {
    close(sv[0]);
    RunChild(sv[1], options);
  }
  close(sv[1]);
  if (child < 0) {
    close(sv[0]);
    return result;
  }
  Watchdog watchdog;
  char tag = 0;
  int listener = ReceiveFd(sv[0], &tag);
  bool served = false;
  if (listener >= 0) {
    result.killable_recv = tag == 'k';
    if (options.sync_wakeup)
      result.sync_wakeup_applied =
          ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
    served = ReceiveParked(listener, options.parked, watchdog) && write(sv[0], "g", 1) == 1 &&
             Serve(listener, child, options.fast_path_syscalls, watchdog);
    close(listener);
  }
  std::string report = served ? ReadReport(sv[0]) : std::string();
  close(sv[0]);
  waitpid(child, nullptr, 0);
  result.ns_per_call = ParseSamples(report);
  return result;
}

}  // namespace nvbench
