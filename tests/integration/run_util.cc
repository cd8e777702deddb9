#include "tests/integration/run_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace nvsentry::testing {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* NvsentryPath() { return NVSENTRY_BIN; }
const char* NvsentryHookedPath() { return NVSENTRY_HOOKED_BIN; }
const char* CtrlGuestPath() { return CTRL_GUEST_BIN; }

Child::Child(const RunSpec& spec) {
  int out[2], err[2], in[2];
  pipe2(out, O_CLOEXEC);
  pipe2(err, O_CLOEXEC);
  pipe2(in, O_CLOEXEC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  if (spec.keep_stdin_open)
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  else
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  for (const auto& e : spec.extra_env) env_store.push_back(e);
  std::vector<char*> envp, argv;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  if (posix_spawnp(&pid_, argv[0], &fa, &attr, argv.data(), envp.data()) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  close(in[0]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  in_fd_ = in[1];
}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {out_fd_, err_fd_, in_fd_})
    if (fd >= 0) close(fd);
}

void Child::Pump(int timeout_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (poll(fds, 2, timeout_ms) <= 0) return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
    ssize_t n = read(fds[i].fd, buf, sizeof buf);
    if (n > 0)
      (i == 0 ? result_.out : result_.err).append(buf, static_cast<size_t>(n));
    else {
      close(fds[i].fd);
      (i == 0 ? out_fd_ : err_fd_) = -1;
    }
  }
}

bool Child::WaitForOutput(const std::string& text, int timeout_ms) {
  int64_t deadline = NowMs() + timeout_ms;
  while (result_.out.find(text) == std::string::npos) {
    int64_t left = deadline - NowMs();
    if (left <= 0 || (out_fd_ < 0 && err_fd_ < 0)) return false;
    Pump(static_cast<int>(left));
  }
  return true;
}

bool Child::WriteStdin(const std::string& text) {
  // A child that already exited must fail the write, not kill the test with SIGPIPE: block it
  // for the write and take a pending one back (ignoring it would be inherited by later children).
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  size_t done = 0;
  bool broken = false;
  while (in_fd_ >= 0 && done < text.size()) {
    ssize_t n = write(in_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken = n < 0 && errno == EPIPE;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (broken) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return done == text.size();
}

void Child::CloseStdin() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

RunResult Child::Finish(int timeout_ms) {
  int64_t deadline = NowMs() + timeout_ms;
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    int64_t left = deadline - NowMs();
    if (left <= 0) {
      result_.timed_out = true;
      kill(pid_, SIGKILL);
      break;
    }
    Pump(static_cast<int>(std::min<int64_t>(left, 1000)));
  }
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  result_.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return result_;
}

RunResult RunProgram(const RunSpec& spec) {
  Child c(spec);
  return c.Finish(spec.timeout_ms);
}

RunResult RunSandboxed(const std::vector<std::string>& options,
                       const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env, int timeout_ms) {
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run"};
  spec.argv.insert(spec.argv.end(), options.begin(), options.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.extra_env = extra_env;
  spec.timeout_ms = timeout_ms;
  return RunProgram(spec);
}

RunResult RunWithTestHooks(const std::string& hooks, const std::vector<std::string>& options,
                           const std::vector<std::string>& argv, int timeout_ms) {
  RunSpec spec;
  spec.argv = {NvsentryHookedPath(), "run"};
  spec.argv.insert(spec.argv.end(), options.begin(), options.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.extra_env = {"NVSENTRY_TEST_HOOKS=" + hooks};
  spec.timeout_ms = timeout_ms;
  return RunProgram(spec);
}

std::map<std::string, std::string> ParseKeyValues(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos && eq > 0) kv[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return kv;
}

std::vector<pid_t> ProcessesMatching(const std::string& needle) {
  std::vector<pid_t> pids;
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::string cmd = ReadProcFile(std::string("/proc/") + e->d_name + "/cmdline");
    for (char& c : cmd)
      if (c == 0) c = ' ';
    if (cmd.find(needle) != std::string::npos) pids.push_back(pid);
  }
  closedir(d);
  return pids;
}

std::string ReadProcFile(const std::string& path) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      text.clear();
      break;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

}  // namespace nvsentry::testing
