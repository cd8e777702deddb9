#include "tests/hostile/job_shell.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ReadFully(int fd, void* buf, size_t len, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  size_t got = 0;
  while (got < len) {
    pollfd p{fd, POLLIN, 0};
    const int64_t left = deadline - NowMs();
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t n = read(fd, static_cast<char*>(buf) + got, len - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

void WriteInt(int fd, int v) { (void)!write(fd, &v, sizeof v); }

[[noreturn]] void Exec(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  execvp(a[0], a.data());
  _exit(127);
}

// The shell: runs in the forked child, only system calls from here on.
[[noreturn]] void ShellMain(const JobShell::Options& o, int slave, int out_w, int cmd_r,
                            int rep_w) {
  setsid();
  signal(SIGTTOU, SIG_IGN);  // as interactive shells do: tcsetpgrp from the background
  if (o.terminal) ioctl(slave, TIOCSCTTY, 0);
  pid_t sibling = -1;
  if (!o.sibling.empty()) {
    sibling = fork();
    if (sibling == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      if (slave >= 0) close(slave);
      Exec(o.sibling);
    }
  }
  int go[2];
  (void)!pipe(go);
  pid_t job = fork();
  if (job == 0) {
    if (o.terminal || o.own_group) setpgid(0, 0);
    signal(SIGTTOU, SIG_DFL);
    char c;
    close(go[1]);
    (void)!read(go[0], &c, 1);  // until the shell has made this the foreground job
    if (o.terminal) {
      dup2(slave, 0);
      dup2(slave, 1);
      dup2(slave, 2);
      if (slave > 2) close(slave);
    } else {
      dup2(open("/dev/null", O_RDONLY), 0);
      dup2(out_w, 1);
      dup2(out_w, 2);
    }
    Exec(o.argv);
  }
  if (o.terminal || o.own_group) setpgid(job, job);
  if (o.terminal) tcsetpgrp(slave, job);
  close(go[0]);
  close(go[1]);
  close(out_w);
  WriteInt(rep_w, job);
  WriteInt(rep_w, sibling);
  for (;;) {
    char cmd;
    if (read(cmd_r, &cmd, 1) != 1) _exit(0);
    int st = 0;
    switch (cmd) {
      case 'w':
        if (waitpid(job, &st, WUNTRACED | WCONTINUED) != job)
          st = -1;
        else if (WIFSTOPPED(st) && o.terminal)
          tcsetpgrp(slave, getpgrp());
        WriteInt(rep_w, st);
        break;
      case 'f':
        if (o.terminal) tcsetpgrp(slave, job);
        WriteInt(rep_w, o.terminal || o.own_group ? killpg(job, SIGCONT) : kill(job, SIGCONT));
        break;
      case 'p': WriteInt(rep_w, o.terminal ? tcgetpgrp(slave) : -1); break;
      case 'i': {
        int n = -1;
        if (o.terminal) ioctl(slave, TIOCINQ, &n);
        WriteInt(rep_w, n);
        break;
      }
      default: WriteInt(rep_w, 0);
    }
  }
}

}  // namespace

JobShell::JobShell(const Options& o) {
  int master = -1, slave = -1, out[2] = {-1, -1}, cmd[2], rep[2];
  if (o.terminal) {
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return;
    fcntl(master, F_SETFD, FD_CLOEXEC);
  } else if (pipe2(out, O_CLOEXEC) != 0) {
    return;
  }
  if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) return;
  shell_ = fork();
  if (shell_ == 0) {
    // Keep only what the shell needs across its own execs (none: the fds it dup2s are
    // close-on-exec, their copies on 0-2 are not).
    close(cmd[1]);
    close(rep[0]);
    if (out[0] >= 0) close(out[0]);
    if (master >= 0) close(master);
    ShellMain(o, slave, out[1], cmd[0], rep[1]);
  }
  close(cmd[0]);
  close(rep[1]);
  if (slave >= 0) close(slave);
  if (out[1] >= 0) close(out[1]);
  to_shell_ = cmd[1];
  from_shell_ = rep[0];
  output_fd_ = o.terminal ? master : out[0];
  int job = -1, sibling = -1;
  if (ReadFully(from_shell_, &job, sizeof job, 10000) &&
      ReadFully(from_shell_, &sibling, sizeof sibling, 10000)) {
    job_ = job;
    sibling_ = sibling;
  }
}

JobShell::~JobShell() {
  if (job_ > 0) {
    kill(job_, SIGKILL);
    kill(-job_, SIGKILL);
  }
  if (sibling_ > 0) kill(sibling_, SIGKILL);
  if (shell_ > 0) {
    kill(shell_, SIGKILL);
    waitpid(shell_, nullptr, 0);
  }
  for (int fd : {to_shell_, from_shell_, output_fd_})
    if (fd >= 0) close(fd);
}

std::optional<int> JobShell::Ask(char command, int timeout_ms) {
  if (write(to_shell_, &command, 1) != 1) return std::nullopt;
  int v;
  if (!ReadFully(from_shell_, &v, sizeof v, timeout_ms)) return std::nullopt;
  return v;
}

std::optional<int> JobShell::NextStatus(int timeout_ms) { return Ask('w', timeout_ms); }

bool JobShell::Foreground(int timeout_ms) {
  std::optional<int> r = Ask('f', timeout_ms);
  return r && *r == 0;
}

std::optional<int> JobShell::ForegroundGroup(int timeout_ms) { return Ask('p', timeout_ms); }
std::optional<int> JobShell::InputQueued(int timeout_ms) { return Ask('i', timeout_ms); }
bool JobShell::ShellAnswers(int timeout_ms) { return Ask('?', timeout_ms).has_value(); }

bool JobShell::WaitForOutput(const std::string& text, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  while (output_.find(text) == std::string::npos) {
    pollfd p{output_fd_, POLLIN, 0};
    const int64_t left = deadline - NowMs();
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char buf[4096];
    ssize_t n = read(output_fd_, buf, sizeof buf);
    if (n <= 0) return false;  // EOF, or EIO: the pty has no process left
    output_.append(buf, static_cast<size_t>(n));
  }
  return true;
}

void JobShell::Type(const std::string& bytes) {
  (void)!write(output_fd_, bytes.data(), bytes.size());
}

char ProcessState(pid_t pid) {
  std::string s = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = s.rfind(')');
  return paren == std::string::npos || paren + 2 >= s.size() ? 0 : s[paren + 2];
}

pid_t ProcessGroup(pid_t pid) {
  std::string s = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = s.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream rest(s.substr(paren + 2));
  std::string state;
  pid_t ppid = -1, pgrp = -1;
  rest >> state >> ppid >> pgrp;
  return pgrp;
}

pid_t FirstChild(pid_t parent) {
  std::ifstream in("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) +
                   "/children");
  pid_t child = -1;
  in >> child;
  return child;
}

bool WaitForState(pid_t pid, char state, bool want, int timeout_ms) {
  // No event tells a test another process's scheduling state: look until it holds or time is up.
  for (int64_t deadline = NowMs() + timeout_ms; NowMs() < deadline; usleep(5000))
    if ((ProcessState(pid) == state) == want) return true;
  return (ProcessState(pid) == state) == want;
}

}  // namespace nvsentry::testing
