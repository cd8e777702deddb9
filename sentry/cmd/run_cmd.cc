#include "sentry/cmd/run_cmd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "hostshim/host/host_port.h"
#include "hostshim/rate_limited_log.h"
#include "sentry/fake_l4t/in_process_jetson.h"
#include "sentry/process/crash.h"
#include "sentry/sandbox/launcher.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// The logger of `nvsentry run`; returns the fd the crash handler writes to (-1: stderr).
absl::StatusOr<int> SetUpLogging(const RunOptions& o) {
  std::shared_ptr<spdlog::logger> logger;
  int crash_fd = -1;
  if (!o.log_file.empty()) {
    // Checked here so that a bad path is an error (spdlog would create missing directories).
    crash_fd = open(o.log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (crash_fd < 0) return absl::ErrnoToStatus(errno, "--log-file: cannot open " + o.log_file);
  }
  try {
    if (o.log_file.empty()) {
      logger = spdlog::stderr_logger_mt("nvsentry");
    } else {
      // spdlog opens with fopen: mark it close-on-exec so the guest never inherits the log.
      spdlog::file_event_handlers handlers;
      handlers.after_open = [](const spdlog::filename_t&, std::FILE* f) {
        fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
      };
      logger = spdlog::basic_logger_mt("nvsentry", o.log_file, false, handlers);
    }
  } catch (const spdlog::spdlog_ex& e) {
    if (crash_fd >= 0) close(crash_fd);
    return absl::InvalidArgumentError(std::string("--log-file: ") + e.what());
  }
  logger->set_pattern("nvsentry: %Y-%m-%d %H:%M:%S.%e [%l] [%t] %v");
  logger->set_level(spdlog::level::from_str(o.log_level));
  SetLogBurst(o.log_burst);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return crash_fd;
}

}  // namespace

int RunRunCommand(const Command& cmd) {
  absl::StatusOr<int> crash_fd = SetUpLogging(cmd.run);
  if (!crash_fd.ok()) {  // a bad --log-file: a usage error, as the parser's are
    fputs(UsageError(CommandId::kRun, crash_fd.status().message()).c_str(), stderr);
    return 2;
  }
  InstallCrashHandler(*crash_fd);
  RunOptions run = cmd.run;
  if (run.simulated_jetson) {  // the host backend's host, inside the sentry
    hostshim::host::SetHostPort(InProcessJetson::kDir, &SimulatedJetsonPort());
    run.host_dev_dir = std::string(InProcessJetson::kDir);
  }
  // The sentry's threads may still run (and log): the logger outlives them (ExitSentry).
  absl::StatusOr<int> status = RunGuest(run);
  if (absl::IsInvalidArgument(status.status())) {  // the command line is wrong: as above
    fputs(UsageError(CommandId::kRun, status.status().message()).c_str(), stderr);
    ExitSentry(2);
  }
  if (!status.ok()) {  // the guest never started
    fprintf(stderr, "nvsentry: %s\n", std::string(status.status().message()).c_str());
    ExitSentry(125);
  }
  ExitSentry(*status);
}

}  // namespace nvsentry::sentry
