#include "sentry/oci/runtime_call.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "sentry/oci/container_state.h"
#include "sentry/oci/oci_log.h"

namespace nvsentry::oci {
namespace {

std::vector<char*> CArgv(std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (std::string& a : argv) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> RuntimeArgv(const OciCommand& command, const OciConfig& config,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv{config.runtime};
  argv.insert(argv.end(), command.runtime_flags.begin(), command.runtime_flags.end());
  argv.push_back("--root=" + RuntimeRoot(command, config));
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

int ExecRuntime(const OciCommand& command, const OciConfig& config,
                const std::vector<std::string>& args) {
  std::vector<std::string> argv = RuntimeArgv(command, config, args);
  std::vector<char*> c = CArgv(argv);
  execvp(c[0], c.data());
  OciLog(command).Error(absl::StrCat("nvsentry-oci: cannot run the runtime ", config.runtime, ": ",
                                     strerror(errno),
                                     " (install it, or name another in the configuration file)"));
  return 1;
}

int RunRuntime(const OciCommand& command, const OciConfig& config,
               const std::vector<std::string>& args) {
  std::vector<std::string> argv = RuntimeArgv(command, config, args);
  std::vector<char*> c = CArgv(argv);
  const pid_t pid = fork();
  if (pid < 0) {
    OciLog(command).Error(absl::StrCat("nvsentry-oci: fork: ", strerror(errno)));
    return 1;
  }
  if (pid == 0) {
    execvp(c[0], c.data());
    OciLog(command).Error(absl::StrCat("nvsentry-oci: cannot run the runtime ", config.runtime,
                                       ": ", strerror(errno)));
    _exit(1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace nvsentry::oci
