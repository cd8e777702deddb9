#include "bench/guest_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "bench/timing.h"

namespace nvbench {
namespace {

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

pid_t Spawn(const std::vector<std::string>& args, int stdout_fd) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(stdout_fd, STDOUT_FILENO);
    execv(argv[0], argv.data());
    fprintf(stderr, "nvsentry_bench: cannot run %s\n", argv[0]);
    _exit(127);
  }
  return pid;
}

// Reads until end of file; false if the deadline passed first.
bool ReadUntilEof(int fd, int64_t deadline_ns, std::string* out) {
  char buf[4096];
  for (;;) {
    int64_t left_ms = (deadline_ns - NowNs()) / 1'000'000;
    if (left_ms <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::optional<std::vector<double>> RunGuest(const std::vector<std::string>& argv,
                                            int timeout_seconds) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return std::nullopt;
  pid_t pid = Spawn(argv, p[1]);
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    return std::nullopt;
  }
  std::string out;
  bool finished = ReadUntilEof(p[0], NowNs() + int64_t{timeout_seconds} * 1'000'000'000, &out);
  close(p[0]);
  if (!finished) {
    fprintf(stderr, "nvsentry_bench: '%s' ran past %d s; killed\n", Join(argv).c_str(),
            timeout_seconds);
    kill(pid, SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished) return std::nullopt;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "nvsentry_bench: '%s' failed (wait status 0x%x)\n", Join(argv).c_str(), status);
    return std::nullopt;
  }
  return ParseSamples(out);
}

std::optional<std::vector<double>> TimeProcess(const std::vector<std::string>& argv, int times,
                                               int timeout_seconds) {
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return std::nullopt;
  std::vector<double> samples;
  for (int i = 0; i < times; ++i) {
    const int64_t t0 = NowNs();
    pid_t pid = Spawn(argv, null);
    if (pid < 0) break;
    // Waits without spinning (a poll loop would take CPU from the process it times): the child's
    // pidfd becomes readable when it exits.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) {
      fprintf(stderr, "nvsentry_bench: pidfd_open: %s\n", strerror(errno));
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      break;
    }
    pollfd p{pidfd, POLLIN, 0};
    int ready;
    do ready = poll(&p, 1, timeout_seconds * 1000);
    while (ready < 0 && errno == EINTR);
    const int64_t t1 = NowNs();
    close(pidfd);
    int status = 0;
    if (ready <= 0) {
      fprintf(stderr, "nvsentry_bench: '%s' ran past %d s; killed\n", Join(argv).c_str(),
              timeout_seconds);
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      break;
    }
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "nvsentry_bench: '%s' failed (wait status 0x%x)\n", Join(argv).c_str(),
              status);
      break;
    }
    samples.push_back(static_cast<double>(t1 - t0));
  }
  close(null);
  if (samples.size() != static_cast<size_t>(times)) return std::nullopt;
  return samples;
}

}  // namespace nvbench
