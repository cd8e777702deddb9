// Running programs (nvsentry and guests) from tests: spawn with captured output and a deadline.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace nvsentry::testing {

struct RunResult {
  int exit_code = -1;  // as a shell reports it: 128+N for death by signal N
  std::string out;
  std::string err;
  bool timed_out = false;
};

struct RunSpec {
  std::vector<std::string> argv;
  std::vector<std::string> extra_env;  // "NAME=value"
  int timeout_ms = 60000;
  bool keep_stdin_open = false;  // a pipe the test closes (else /dev/null)
};

// A running child with its output pipes; Finish() collects it.
class Child {
 public:
  explicit Child(const RunSpec& spec);
  ~Child();
  pid_t pid() const { return pid_; }
  // Reads stdout until `text` appears (true) or the deadline passes (false).
  bool WaitForOutput(const std::string& text, int timeout_ms);
  void CloseStdin();
  // Writes `text` to the child's standard input (keep_stdin_open); false if it could not (a child
  // that already exited fails the write instead of raising SIGPIPE in the test).
  bool WriteStdin(const std::string& text);
  RunResult Finish(int timeout_ms);

 private:
  void Pump(int timeout_ms);
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1, in_fd_ = -1;
  RunResult result_;
};

RunResult RunProgram(const RunSpec& spec);
// nvsentry run [options] -- argv
RunResult RunSandboxed(const std::vector<std::string>& options,
                       const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env = {}, int timeout_ms = 60000);

// The same with the test build of nvsentry (nvsentry_hooked), the test hooks named in `hooks`
// (sentry/process/test_hooks.h) on.
RunResult RunWithTestHooks(const std::string& hooks, const std::vector<std::string>& options,
                           const std::vector<std::string>& argv, int timeout_ms = 60000);

// "key=value" pairs printed by a guest, across all lines and space-separated fields.
std::map<std::string, std::string> ParseKeyValues(const std::string& text);

// Pids of live processes whose command line contains `needle`.
std::vector<pid_t> ProcessesMatching(const std::string& needle);

// The whole of a /proc file, or "" when it cannot be read. A process can exit between the open
// and the read, and the read then fails with ESRCH: libstdc++'s stream buffers throw on such a
// failure from an istreambuf_iterator, which ended a watching thread (and the test) in CI.
std::string ReadProcFile(const std::string& path);

const char* NvsentryPath();
const char* NvsentryHookedPath();
const char* CtrlGuestPath();

}  // namespace nvsentry::testing
