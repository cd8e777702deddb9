// The one table of nvsentry's command line (sentry/cmd/cli.h): every command with its operands and
// every option with its value, help, default and what it sets. The parser, --help and README.md's
// options tables are made from it and from nothing else; an option is added here only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// A command: a group (abi, policy, nvsentry itself) whose first operand names a subcommand, or a
// leaf that takes operands.
struct CommandSpec {
  CommandId id;
  CommandId parent;            // kTop for the commands, and for kTop itself
  absl::string_view name;      // "show"
  absl::string_view operands;  // "NAME|0xCODE", "[DEVICE]", "PROGRAM [ARGS...]"
  uint8_t min_operands, max_operands;
  // The first operand and all after it are the operands, options or not (run: PROGRAM ARGS...).
  bool rest_after_first;
  absl::string_view summary;  // one line in the group's help
  absl::string_view about;    // the paragraphs of its --help, if more is to be said
  // Checks the operands once all are parsed (fake-l4t's DIR is a directory); null: none.
  absl::Status (*check_operands)(const std::vector<std::string>&) = nullptr;
};

// How an option takes its value: none; one (--opt=V or --opt V); one only after '=' (--trace,
// whose next argument may be the program); two, as the next two arguments (--bind SRC DST).
enum class Arity : uint8_t { kSwitch, kValue, kOptionalValue, kTwoValues };

// One option as given: its name, its value(s) (has_value: given at all, for kOptionalValue).
struct OptionArg {
  absl::string_view name, value, second;
  bool has_value;
};

using OptionSetter = absl::Status (*)(Command&, const OptionArg&);

struct OptionSpec {
  uint32_t commands;        // a bit per CommandId (Cmds) that takes it
  absl::string_view name;   // "--log-level"
  absl::string_view value;  // "LEVEL"; "SRC DST" for kTwoValues; empty for kSwitch
  Arity arity;
  absl::string_view heading;   // non-empty: a section of the help starts here
  absl::string_view help;      // what it does
  absl::string_view defaults;  // what holds without it; empty: nothing to say
  OptionSetter set;            // checks the value and sets it (the message names the option)
  // Given without one of `needs` ("--frames", "--backend=host", alternatives joined by '|') it is
  // refused; given with `excludes`, too, the error saying what to do `instead`.
  absl::string_view needs = {};
  absl::string_view excludes = {};
  absl::string_view instead = {};
  bool required = false;         // the command cannot go without it
  absl::string_view alias = {};  // "-h" for --help
};

constexpr uint32_t Cmds(CommandId id) { return 1u << static_cast<unsigned>(id); }
template <typename... Ids>
constexpr uint32_t Cmds(CommandId id, Ids... more) {
  return Cmds(id) | Cmds(more...);
}

std::span<const CommandSpec> CommandTable();
std::span<const OptionSpec> OptionTable();
const CommandSpec& Spec(CommandId id);
// The subcommand `name` of `parent`; null if none.
const CommandSpec* Child(CommandId parent, absl::string_view name);

}  // namespace nvsentry::sentry
