#include "sentry/oci/container_sentry.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "sentry/oci/oci_log.h"
#include "sentry/sandbox/container_serve.h"
#include "spdlog/spdlog.h"

namespace nvsentry::oci {
namespace {

// Field 22 of /proc/PID/stat (the start time, which tells a pid's reuse apart), and the state
// letter; nullopt when there is no such process.
struct ProcStat {
  char state;
  unsigned long long start;
};
std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(paren + 2));
  ProcStat s{};
  std::string skip;
  rest >> s.state;
  for (int field = 4; field < 22; ++field) rest >> skip;
  rest >> s.start;
  if (!rest) return std::nullopt;
  return s;
}

// The sentry's process, after the fork: never returns.
// The sentry's logger: spdlog's default (standard error, paths.sentry_log) and the engine's log, if
// any. Called while the process is single-threaded.
void SetUpSentryLog(const sentry::RunOptions& run, const EngineLog& engine_log) {
  spdlog::set_level(spdlog::level::from_str(run.log_level));
  spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%f] [%l] %v");
  if (engine_log.file.empty()) return;
  if (std::shared_ptr<EngineLogSink> e = EngineLogSink::Open(engine_log.file, engine_log.json))
    spdlog::default_logger()->sinks().push_back(std::move(e));
  spdlog::default_logger()->flush_on(spdlog::level::trace);
}

[[noreturn]] void RunSentry(const ContainerPaths& paths, const sentry::RunOptions& run,
                            const EngineLog& engine_log, int ready_fd) {
  setsid();
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  const int log = open(paths.sentry_log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  dup2(null, 0);
  dup2(log >= 0 ? log : null, 1);
  dup2(log >= 0 ? log : null, 2);
  dup2(ready_fd, 3);
  syscall(SYS_close_range, 4, ~0U, 0);  // none of the engine's fds stays open in the sentry
  SetUpSentryLog(run, engine_log);
  sentry::ContainerServeOptions o{run, paths.devices, paths.socket};
  const int status = sentry::ServeContainer(o, [](const absl::Status& s) {
    const std::string word = s.ok() ? std::string("ok") : std::string(s.message());
    if (write(3, word.data(), word.size()) < 0) {
      // The parent is gone: it cleans up after itself.
    }
    close(3);
  });
  spdlog::default_logger()->flush();
  _exit(status);
}

absl::Status WritePid(const ContainerPaths& paths, pid_t pid) {
  std::optional<ProcStat> st = ReadProcStat(pid);
  std::ofstream out(paths.sentry_pid);
  out << pid << " " << (st ? st->start : 0) << "\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", paths.sentry_pid));
  return absl::OkStatus();
}

}  // namespace

absl::Status StartContainerSentry(const ContainerPaths& paths, const sentry::RunOptions& run,
                                  const EngineLog& engine_log) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe2");
  const pid_t pid = fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    close(ready[0]);
    RunSentry(paths, run, engine_log, ready[1]);
  }
  close(ready[1]);
  std::string word;
  char buf[512];
  ssize_t n;
  while ((n = read(ready[0], buf, sizeof buf)) > 0) word.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  if (word != "ok") {
    // A rootless engine's sentry runs as its user, and /dev/fuse is root's alone on some hosts.
    const bool fuse = word.find("/dev/fuse") != std::string::npos;
    return absl::FailedPreconditionError(
        absl::StrCat("the container's sentry could not start: ",
                     word.empty() ? "it exited (see " + paths.sentry_log + ")" : word,
                     fuse ? " (the sentry mounts its device files with FUSE as the user "
                            "nvsentry-oci runs as: under a rootless engine /dev/fuse must be "
                            "open to that user, mode 0666 as most distributions make it)"
                          : ""));
  }
  return WritePid(paths, pid);
}

absl::Status StopContainerSentry(const ContainerPaths& paths) {
  std::ifstream in(paths.sentry_pid);
  pid_t pid = 0;
  unsigned long long start = 0;
  if (in >> pid >> start && pid > 0) {
    std::optional<ProcStat> st = ReadProcStat(pid);
    if (st && st->start == start && st->state != 'Z') {
      kill(pid, SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while ((st = ReadProcStat(pid)) && st->start == start && st->state != 'Z') {
        if (std::chrono::steady_clock::now() > deadline) {
          kill(pid, SIGKILL);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }
  if (umount2(paths.devices.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return absl::ErrnoToStatus(errno, absl::StrCat("unmounting ", paths.devices));
  return absl::OkStatus();
}

}  // namespace nvsentry::oci
