// nvsentry's entry point: parses the command line (sentry/cmd/cli.h) and hands it to its
// command's file: run_cmd, abi_cmd, policy_cmd, cdi_cmd, help_cmd, or
// fake-l4t's server.
#include <cstdio>
#include <string>

#include "absl/synchronization/mutex.h"
#include "sentry/cmd/abi_cmd.h"
#include "sentry/cmd/cdi_cmd.h"
#include "sentry/cmd/cli.h"
#include "sentry/cmd/help_cmd.h"
#include "sentry/cmd/policy_cmd.h"
#include "sentry/cmd/run_cmd.h"
#include "sentry/fake_l4t/fake_l4t_cmd.h"
#include "sentry/process/startup_marks.h"

int main(int argc, char** argv) {
  using namespace nvsentry::sentry;
  StartupMarksInit();
  const absl::StatusOr<Command> cmd = ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    fputs(std::string(cmd.status().message()).c_str(), stderr);
    return 2;
  }
  if (cmd->startup_marks) StartupMarksOn();
  // Debian's Abseil is built with its mutex deadlock detector on, which records every lock
  // acquisition in a graph: a cost on each of the sentry's calls. The unit tests keep it.
  if (!cmd->deadlock_detection) absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (cmd->help) return RunHelpCommand(*cmd);
  switch (TopCommand(cmd->id)) {
    case CommandId::kRun: return RunRunCommand(*cmd);
    case CommandId::kAbi: return RunAbiCommand(*cmd);
    case CommandId::kPolicy: return RunPolicyCommand(*cmd);
    case CommandId::kFakeL4t: return RunFakeL4t(cmd->fake_l4t);
    case CommandId::kCdi: return RunCdiCommand(*cmd);
    default: return RunHelpCommand(*cmd);  // nvsentry --version, nvsentry help
  }
}
