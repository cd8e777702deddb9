#include "sentry/sandbox/container_serve.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/render.h"
#include "proxy/learn.h"
#include "proxy/trace.h"
#include "sentry/core/sentry.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/devfs/fuse_mount.h"
#include "sentry/sandbox/fd_passing.h"
#include "sentry/sandbox/identity.h"
#include "sentry/sandbox/launcher.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// The socket runc connects to, listening (close-on-exec).
absl::StatusOr<hostshim::UniqueFd> ListenAt(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", path));
  memcpy(addr.sun_path, path.data(), path.size());
  hostshim::UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) return absl::ErrnoToStatus(errno, "socket");
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return absl::ErrnoToStatus(errno, absl::StrCat("bind ", path));
  chmod(path.c_str(), 0600);
  if (listen(s.get(), 16) != 0) return absl::ErrnoToStatus(errno, "listen");
  return s;
}

// The device files, attached at `dir`; served later (ServeDeviceFiles).
absl::StatusOr<FuseMount> AttachDeviceFiles(const std::string& dir) {
  absl::StatusOr<FuseMount> m = MakeFuseMount("the container's device files");
  if (!m.ok()) return m.status();
  if (absl::Status s = AttachMount(*m, dir.c_str()); !s.ok()) return s;
  m->mount.Reset();
  return m;
}

// Serves the device files `m` from now on through `sentry`.
absl::Status ServeDeviceFiles(FuseMount& m, Sentry& sentry) {
  // Never destroyed, as the sentry: served until the process ends.
  auto* deferred = new DeferredDeviceFileHandler;
  auto fs = std::make_unique<DeviceFs>(std::move(m.connection), *deferred, std::vector<FlatEntry>{},
                                       0, 0);
  if (!fs->Serve()) return absl::InternalError("libfuse refused the device files' connection");
  sentry.ServeDeviceFiles(std::move(fs), m.dev, *deferred);
  return absl::OkStatus();
}

// A child that keeps CAP_SYS_ADMIN for one job: unmounting `dir` once the sentry has ended
// (its end of the pipe closed: the sentry's exit, a crash or SIGKILL alike). Forked while the
// sentry is single-threaded.
void UnmountWhenTheSentryEnds(const std::string& dir) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  const pid_t pid = fork();
  if (pid == 0) {
    // It holds nothing else of the sentry's (the end the sentry's starter waits on, the socket).
    dup2(p[0], 3);
    syscall(SYS_close_range, 4, ~0U, 0);
    char c;
    while (read(3, &c, 1) < 0 && errno == EINTR) {
    }
    umount2(dir.c_str(), MNT_DETACH);
    _exit(0);
  }
  close(p[0]);
  if (pid < 0) close(p[1]);  // the sentry's delete unmounts it instead
  // p[1] stays open, unused, for the sentry's whole life.
}

// The sentry keeps only what it needs over the container's processes (their memory and fds:
// CAP_SYS_PTRACE, as they may hold capabilities the sentry then lacks) and CAP_SYS_NICE (as
// `nvsentry run`'s sentry). Done before any thread exists, so every thread has the reduced set.
absl::Status DropCapabilities() {
  constexpr int kSysPtrace = 19, kSysNice = 23;
  // The bounding set first, while CAP_SETPCAP is still held (EINVAL: past the kernel's last).
  for (int cap = 0; cap < 64; ++cap)
    if (cap != kSysPtrace && cap != kSysNice && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 &&
        errno != EINVAL)
      return absl::ErrnoToStatus(errno, "dropping the bounding set");
  if (const char* failed = KeepOnlyCapabilities((1u << kSysPtrace) | (1u << kSysNice)))
    return absl::ErrnoToStatus(errno, failed);
  return absl::OkStatus();
}

// The run's --trace file (made, or emptied, by the sentry: a file of its own) gets the trace.
absl::Status StartTrace(const RunOptions& run, proxy::GuestConfig& guest) {
  if (!run.trace) return absl::OkStatus();
  const int fd =
      open(run.trace_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  FILE* out = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (out == nullptr)
    return absl::ErrnoToStatus(errno, absl::StrCat("the trace file ", run.trace_file));
  guest.Trace(std::make_shared<proxy::Tracer>(
      out, run.trace_json ? proxy::Tracer::Format::kJson : proxy::Tracer::Format::kText));
  return absl::OkStatus();
}

// --learn: the file, opened while the sentry may still make it (closed by WriteLearned).
absl::StatusOr<FILE*> OpenLearnFile(const RunOptions& run) {
  if (run.learn_file.empty()) return nullptr;
  const int fd =
      open(run.learn_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  FILE* out = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (out == nullptr)
    return absl::ErrnoToStatus(errno, absl::StrCat("the learned policy's file ", run.learn_file));
  return out;
}

// Writes the smallest policy that allows what the container's processes did.
void WriteLearned(FILE* out, const proxy::GuestConfig& guest) {
  if (out == nullptr) return;
  policy::Policy learned =
      guest.services.learner->Learned(guest.policy.rules(), *guest.services.budget);
  const std::string text =
      "# Learned by nvsentry-oci (annotation nvsentry.learn); the container ran with action =\n"
      "# audit: this policy allows what it did and refuses the rest.\n" +
      policy::RenderToml(learned, true);
  if (fwrite(text.data(), 1, text.size(), out) != text.size() || fclose(out) != 0)
    spdlog::error("writing the learned policy: {}", strerror(errno));
}

// The signals that end the sentry, blocked (taken through the returned signalfd).
hostshim::UniqueFd BlockEndSignals() {
  sigset_t end;
  sigemptyset(&end);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&end, s);
  sigprocmask(SIG_BLOCK, &end, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return hostshim::UniqueFd(signalfd(-1, &end, SFD_CLOEXEC));
}

// Takes one listener from a connection on `sock`; false when none came.
bool TakeListener(int sock, Sentry& sentry, std::vector<pollfd>& fds) {
  hostshim::UniqueFd conn(accept4(sock, nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn) return false;
  absl::StatusOr<FdMessage> m = ReceiveWithFd(conn.get());
  if (!m.ok() || !m->fd) {
    spdlog::warn("a connection brought no seccomp listener");
    return false;
  }
  const int fd = m->fd.Release();
  spdlog::info("serving a new process's listener (fd {})", fd);
  fds.push_back({fd, 0, 0});  // only its hang-up is polled; the receivers take its calls
  sentry.AddListener(fd);
  return true;
}

// Waits for listeners, a signal, or the hang-up of every listener taken.
void ServeUntilTheEnd(int sock, int sigfd, Sentry& sentry) {
  std::vector<pollfd> fds{{sock, POLLIN, 0}, {sigfd, POLLIN, 0}};
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("poll: {}", strerror(errno));
      return;
    }
    if (fds[1].revents != 0) {
      spdlog::info("asked to end");
      return;
    }
    if (fds[0].revents & POLLIN) TakeListener(sock, sentry, fds);
    size_t hung = 0;
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents & POLLHUP) fds[i].fd = -fds[i].fd - 1;  // poll skips it from now on
      if (fds[i].fd < 0) ++hung;
    }
    if (fds.size() > 2 && hung == fds.size() - 2) {
      spdlog::info("the container's last process is gone");
      return;
    }
  }
}

}  // namespace

int ServeContainer(const ContainerServeOptions& options,
                   const std::function<void(const absl::Status&)>& ready) {
  hostshim::UniqueFd sigfd = BlockEndSignals();  // before any thread, which inherits the mask
  absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> guest = MakeGuestConfig(options.run);
  if (!guest.ok()) {
    ready(guest.status());
    return 1;
  }
  if (absl::Status t = StartTrace(options.run, **guest); !t.ok()) {
    ready(t);
    return 1;
  }
  absl::StatusOr<FILE*> learn = OpenLearnFile(options.run);
  if (!learn.ok()) {
    ready(learn.status());
    return 1;
  }
  absl::StatusOr<FuseMount> files = AttachDeviceFiles(options.device_dir);
  if (!files.ok()) {
    ready(files.status());
    return 1;
  }
  UnmountWhenTheSentryEnds(options.device_dir);
  absl::StatusOr<hostshim::UniqueFd> sock = ListenAt(options.socket_path);
  absl::Status s = sock.ok() ? DropCapabilities() : sock.status();
  auto* sentry = s.ok() ? new Sentry(SentryOptions{options.run.workers, options.run.sync_wakeup,
                                                   *guest, nullptr, 1, options.run.host_dev_dir})
                        : nullptr;
  if (s.ok()) s = ServeDeviceFiles(*files, *sentry);
  ready(s);
  if (!s.ok()) return 1;
  ServeUntilTheEnd(sock->get(), sigfd.get(), *sentry);
  unlink(options.socket_path.c_str());
  sentry->Quiesce();
  WriteLearned(*learn, **guest);
  return 0;
}

}  // namespace nvsentry::sentry
