// A stand-in for the shell that starts nvsentry, for the launcher tests: a child process that
// leads a new session and starts one job (a program), either as a job-control shell does (in a
// process group of its own, the foreground job of a fresh pseudo-terminal) or as a script does
// (in the shell's own group, beside a sibling process). The test drives it through pipes: the
// job's wait statuses (WUNTRACED | WCONTINUED, as the shell's waitpid sees them), `fg`, the
// terminal's foreground group and input queue. Everything it started is killed on destruction.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace nvsentry::testing {

class JobShell {
 public:
  struct Options {
    std::vector<std::string> argv;  // the job
    // A new pseudo-terminal as the session's controlling terminal, the job its foreground job.
    // Otherwise the job has no terminal (stdin /dev/null, stdout and stderr a pipe to the test).
    bool terminal = false;
    // The job in a process group of its own, as a job-control shell starts it; otherwise in the
    // shell's group, as a script starts it. (The terminal's foreground job has its own group.)
    bool own_group = false;
    std::vector<std::string> sibling = {};  // started first in the shell's group, if not empty
  };

  explicit JobShell(const Options& options);
  ~JobShell();
  JobShell(const JobShell&) = delete;
  JobShell& operator=(const JobShell&) = delete;

  bool started() const { return job_ > 0; }
  pid_t shell() const { return shell_; }
  pid_t job() const { return job_; }
  pid_t sibling() const { return sibling_; }

  // The job's next wait status as the shell's waitpid reports it; nullopt if none came in time or
  // the shell is gone. On a stop the shell takes its terminal back, as shells do.
  std::optional<int> NextStatus(int timeout_ms);
  // `fg`: the terminal (if any) to the job's group, then SIGCONT to it.
  bool Foreground(int timeout_ms);
  // The terminal's foreground group (tcgetpgrp) and the bytes waiting in its input queue
  // (TIOCINQ), as the shell sees them.
  std::optional<int> ForegroundGroup(int timeout_ms);
  std::optional<int> InputQueued(int timeout_ms);
  // Whether the shell process is still alive (and answers).
  bool ShellAnswers(int timeout_ms);

  // Everything the job wrote (its terminal's output in terminal mode).
  const std::string& output() const { return output_; }
  // Reads the job's output until `text` appears (true) or the deadline passes.
  bool WaitForOutput(const std::string& text, int timeout_ms);
  // Types `bytes` on the terminal (terminal mode).
  void Type(const std::string& bytes);

 private:
  std::optional<int> Ask(char command, int timeout_ms);
  pid_t shell_ = -1, job_ = -1, sibling_ = -1;
  int to_shell_ = -1, from_shell_ = -1;
  int output_fd_ = -1;  // pty master, or the read end of the job's output pipe
  std::string output_;
};

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z'...), or 0 if there is no such process.
char ProcessState(pid_t pid);
// Field 5 of /proc/PID/stat: the process group, or -1.
pid_t ProcessGroup(pid_t pid);
// The first child of a single-threaded or main-thread parent (/proc/P/task/P/children), or -1.
pid_t FirstChild(pid_t parent);
// Waits until `pid`'s state letter is (or, with want == false, is not) `state`.
bool WaitForState(pid_t pid, char state, bool want, int timeout_ms);

}  // namespace nvsentry::testing
