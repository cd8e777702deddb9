#include "sentry/sandbox/container_serve.h"

#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sentry/core/sentry.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/devfs/fuse_mount.h"
#include "sentry/sandbox/fd_passing.h"
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

// The device files attached at `dir` and served by `sentry` from now on.
absl::Status AttachDeviceFiles(const std::string& dir, Sentry& sentry) {
  absl::StatusOr<FuseMount> m = MakeFuseMount("the container's device files");
  if (!m.ok()) return m.status();
  if (absl::Status s = AttachMount(*m, dir.c_str()); !s.ok()) return s;
  // Never destroyed, as the sentry: served until the process ends.
  auto* deferred = new DeferredDeviceFileHandler;
  auto fs = std::make_unique<DeviceFs>(std::move(m->connection), *deferred,
                                       std::vector<FlatEntry>{}, 0, 0);
  if (!fs->Serve()) {
    umount2(dir.c_str(), MNT_DETACH);
    return absl::InternalError("libfuse refused the device files' connection");
  }
  sentry.ServeDeviceFiles(std::move(fs), m->dev, *deferred);
  return absl::OkStatus();
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
  auto* sentry = new Sentry(SentryOptions{options.run.workers, options.run.sync_wakeup, *guest,
                                          nullptr, 1, options.run.host_dev_dir});
  if (absl::Status s = AttachDeviceFiles(options.device_dir, *sentry); !s.ok()) {
    ready(s);
    return 1;
  }
  absl::StatusOr<hostshim::UniqueFd> sock = ListenAt(options.socket_path);
  if (!sock.ok()) {
    umount2(options.device_dir.c_str(), MNT_DETACH);
    ready(sock.status());
    return 1;
  }
  ready(absl::OkStatus());
  ServeUntilTheEnd(sock->get(), sigfd.get(), *sentry);
  unlink(options.socket_path.c_str());
  if (umount2(options.device_dir.c_str(), MNT_DETACH) != 0)
    spdlog::warn("unmounting the device files at {}: {}", options.device_dir, strerror(errno));
  sentry->Quiesce();
  return 0;
}

}  // namespace nvsentry::sentry
