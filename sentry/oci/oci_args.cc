#include "sentry/oci/oci_args.h"

#include <array>
#include <string_view>

namespace nvsentry::oci {
namespace {

// runc's global flags; urfave/cli takes them with one dash or two, a value after '=' or next.
struct GlobalFlag {
  std::string_view name;
  bool takes_value;
};
constexpr std::array<GlobalFlag, 7> kGlobalFlags{{{"root", true},
                                                  {"log", true},
                                                  {"log-format", true},
                                                  {"debug", false},
                                                  {"systemd-cgroup", false},
                                                  {"rootless", true},
                                                  {"criu", true}}};

// The flag's name without its dashes and its '=value', and the value after '=' if any.
std::string_view FlagName(std::string_view arg, std::optional<std::string>* inline_value) {
  arg.remove_prefix(arg.starts_with("--") ? 2 : 1);
  if (size_t eq = arg.find('='); eq != std::string_view::npos) {
    *inline_value = std::string(arg.substr(eq + 1));
    return arg.substr(0, eq);
  }
  return arg;
}

void Keep(OciCommand& c, std::string_view name, const std::string& value) {
  if (name == "root") {
    c.root = value;
    return;
  }
  if (name == "log") c.log_file = value;
  if (name == "log-format") c.log_json = value == "json";
  c.runtime_flags.push_back("--" + std::string(name) + "=" + value);
}

}  // namespace

absl::StatusOr<OciCommand> ParseOciCommand(std::span<char* const> argv) {
  OciCommand c;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string_view arg = argv[i];
    // The runtime's own --version and --help (podman info asks for the version) are its verbs.
    if (!arg.starts_with("-") || arg == "-" || arg == "--version" || arg == "-v" ||
        arg == "--help" || arg == "-h")
      break;
    std::optional<std::string> value;
    const std::string_view name = FlagName(arg, &value);
    const GlobalFlag* flag = nullptr;
    for (const GlobalFlag& f : kGlobalFlags)
      if (f.name == name) flag = &f;
    if (flag == nullptr) return absl::InvalidArgumentError("unknown flag " + std::string(arg));
    if (!flag->takes_value) {
      if (name == "debug") c.debug = value.value_or("true") != "false";
      c.runtime_flags.emplace_back(arg);
      continue;
    }
    if (!value) {
      if (i + 1 >= argv.size())
        return absl::InvalidArgumentError(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    Keep(c, name, *value);
  }
  if (i >= argv.size()) return absl::InvalidArgumentError("no command given");
  c.verb = argv[i];
  for (++i; i < argv.size(); ++i) c.args.emplace_back(argv[i]);
  return c;
}

absl::StatusOr<CreateArgs> ParseCreateArgs(const std::vector<std::string>& args) {
  CreateArgs c;
  // The flags of create and run that take a value (runc 1.1); the rest are booleans.
  auto takes_value = [](std::string_view n) {
    return n == "console-socket" || n == "pid-file" || n == "preserve-fds" || n == "bundle" ||
           n == "b";
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (!arg.starts_with("-")) {
      c.id = args[i];
      c.without_bundle.push_back(args[i]);
      continue;
    }
    std::optional<std::string> value;
    const std::string_view name = FlagName(arg, &value);
    const bool bundle = name == "bundle" || name == "b";
    if (name == "detach" || name == "d") c.detach = value.value_or("true") != "false";
    if (takes_value(name) && !value) {
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(std::string(arg) + " needs a value");
      value = args[i + 1];
      if (!bundle) c.without_bundle.push_back(args[i]);
      ++i;
    }
    if (bundle) {
      c.bundle = *value;
      continue;
    }
    c.without_bundle.push_back(args[i]);
  }
  if (c.id.empty()) return absl::InvalidArgumentError("no container id given");
  if (c.bundle.empty()) c.bundle = ".";
  return c;
}

std::string ContainerIdOf(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (!a.starts_with("-")) return a;
  return "";
}

bool HasFlag(const std::vector<std::string>& args, std::string_view long_name, char short_name) {
  for (const std::string& a : args) {
    const std::string name(long_name);
    if (a == "--" + name || a == "-" + name || a == "--" + name + "=true" ||
        a == std::string{'-', short_name})
      return true;
  }
  return false;
}

}  // namespace nvsentry::oci
