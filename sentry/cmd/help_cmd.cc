#include "sentry/cmd/help_cmd.h"

namespace nvsentry::sentry {

int RunHelpCommand(const Command& cmd, FILE* out) {
  if (cmd.version)
    fputs("nvsentry 0.1.0\n", out);
  else if (cmd.markdown)
    fputs(OptionsMarkdown().c_str(), out);
  else if (cmd.id == CommandId::kHelp && !cmd.help)
    fputs(HelpText(HelpTopic(cmd.operands).value_or(CommandId::kTop)).c_str(), out);
  else
    fputs(HelpText(cmd.id).c_str(), out);
  return 0;
}

int ParseAndRun(absl::string_view command, const std::vector<std::string>& args, FILE* out,
                FILE* err, CommandRunner run) {
  std::vector<absl::string_view> all = {command};
  all.insert(all.end(), args.begin(), args.end());
  absl::StatusOr<Command> cmd = ParseArgs(all);
  if (!cmd.ok()) {
    fputs(std::string(cmd.status().message()).c_str(), err);
    return 2;
  }
  if (cmd->help) return RunHelpCommand(*cmd, out);
  return run(*cmd, out, err);
}

}  // namespace nvsentry::sentry
