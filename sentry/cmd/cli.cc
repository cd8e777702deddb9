// The command line's parser: walks the arguments once against the table (sentry/cmd/cli_table.h).
//
// Why not CLI11 (Debian's libcli11-dev 2.1.2): nvsentry's whole `run -- /bin/true` takes about
// 2.9 ms and is measured against bubblewrap, so parsing must cost microseconds. CLI11 builds its
// App (an object per option, std::function callbacks, validators, strings) at every start and
// reports errors and --help by exceptions. A probe with run's options and the subcommands, built
// as nvsentry is (-O2, static libstdc++), took 125-145 us for its first parse in a fresh process
// (160-190 us for an error) and 77 us for each parse after. This parser, in nvsentry: a median
// 16-19 us for the first parse (page faults of first use; the hand-written parser it replaced,
// 13 us) and 0.7-1.3 us after, the table being constant data. CLI11 would not have spared much
// code either: its help layout is not ours and it writes no Markdown; `run -- PROGRAM ARGS` needs
// more than its prefix_command (2.1.2 refused the PROGRAM after `--`); and the rules between
// options (needs, excludes) would still be written here.
#include "sentry/cmd/cli.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sentry/cmd/cli_table.h"

namespace nvsentry::sentry {
namespace {

bool IsGroup(CommandId id) {
  for (const CommandSpec& c : CommandTable())
    if (c.parent == id && c.id != id) return true;
  return false;
}

const OptionSpec* FindOption(CommandId id, absl::string_view name) {
  for (const OptionSpec& o : OptionTable())
    if ((o.commands & Cmds(id)) && (o.name == name || (!o.alias.empty() && o.alias == name)))
      return &o;
  return nullptr;
}

// The `n`th required word of an operands' text ("A B" -> "B"), for "missing B".
absl::string_view RequiredOperand(absl::string_view operands, size_t n) {
  size_t i = 0;
  for (absl::string_view w : absl::StrSplit(operands, ' ', absl::SkipEmpty())) {
    if (absl::StartsWith(w, "[")) break;
    if (i++ == n) return w;
  }
  return operands;
}

class Parser {
 public:
  explicit Parser(std::span<const absl::string_view> args) : args_(args) {}
  absl::StatusOr<Command> Parse();

 private:
  absl::Status Error(absl::string_view why) const {
    return absl::InvalidArgumentError(UsageError(cmd_.id, why));
  }
  absl::Status Step(absl::string_view arg);
  absl::Status Option(absl::string_view arg);
  absl::Status Values(const OptionSpec& spec, OptionArg& a);
  absl::Status Operand(absl::string_view arg);
  absl::StatusOr<Command> FakeL4tOperands();
  absl::Status CheckOperands() const;
  absl::Status CheckOptions() const;
  bool AnyGiven(absl::string_view alternatives) const;

  std::span<const absl::string_view> args_;
  size_t i_ = 0;
  bool rest_ = false;                       // `--` seen, or run's PROGRAM: the rest are operands
  size_t operands_at_dashdash_ = SIZE_MAX;  // operands before `--`
  Command cmd_;
  absl::string_view extra_;  // the first operand after --help or --version
  struct GivenOption {
    const OptionSpec* spec;
    absl::string_view value;
  };
  std::vector<GivenOption> given_;
};

absl::StatusOr<Command> Parser::Parse() {
  absl::Status error;  // the first; a help request anywhere makes it moot
  for (; i_ < args_.size(); ++i_) {
    const absl::Status s = Step(args_[i_]);
    if (!s.ok() && error.ok()) error = s;
  }
  if (!extra_.empty())
    return Error(absl::StrCat("unexpected argument '", extra_, "' after ",
                              cmd_.help ? "--help" : "--version"));
  if (cmd_.help) return std::move(cmd_);
  if (!error.ok()) return error;
  if (cmd_.version) return std::move(cmd_);
  if (IsGroup(cmd_.id))
    return Error(cmd_.id == CommandId::kTop ? "missing command" : "missing subcommand");
  if (absl::Status s = CheckOperands(); !s.ok()) return s;
  if (absl::Status s = CheckOptions(); !s.ok()) return s;
  if (cmd_.markdown && !cmd_.operands.empty())
    return Error("--markdown prints every command's options: it takes no COMMAND");
  if (cmd_.id == CommandId::kRun) cmd_.run.argv = std::move(cmd_.operands);
  if (cmd_.id == CommandId::kFakeL4t) return FakeL4tOperands();
  return std::move(cmd_);
}

// fake-l4t's DIR, then PROGRAM and its ARGS only after `--`.
absl::StatusOr<Command> Parser::FakeL4tOperands() {
  std::vector<std::string>& ops = cmd_.operands;
  if (ops.size() > 1 && operands_at_dashdash_ != 1)
    return Error(absl::StrCat("unexpected argument '", ops[operands_at_dashdash_ == 0 ? 0 : 1],
                              "': PROGRAM comes after DIR and --"));
  if (ops.size() == 1 && operands_at_dashdash_ == 1) return Error("missing PROGRAM after --");
  cmd_.fake_l4t.dir = std::move(ops[0]);
  cmd_.fake_l4t.program.assign(std::make_move_iterator(ops.begin() + 1),
                               std::make_move_iterator(ops.end()));
  ops.clear();
  return std::move(cmd_);
}

// One argument: `--`, an option (with its values) or an operand.
absl::Status Parser::Step(absl::string_view arg) {
  if (!rest_ && arg == "--" && !IsGroup(cmd_.id)) {
    rest_ = true;
    operands_at_dashdash_ = cmd_.operands.size();
    return absl::OkStatus();
  }
  if (!rest_ && arg.size() > 1 && arg[0] == '-') return Option(arg);
  return Operand(arg);
}

absl::Status Parser::Option(absl::string_view arg) {
  OptionArg a{arg, {}, {}, false};
  if (const size_t eq = arg.find('='); eq != absl::string_view::npos) {
    a.name = arg.substr(0, eq);
    a.value = arg.substr(eq + 1);
    a.has_value = true;
  }
  const OptionSpec* spec = FindOption(cmd_.id, a.name);
  if (spec == nullptr) return Error(absl::StrCat("unknown option '", a.name, "'"));
  a.name = spec->name;
  if (absl::Status s = Values(*spec, a); !s.ok()) return s;
  if (cmd_.help && spec->name != "--help") return absl::OkStatus();  // -h as its value
  if (absl::Status s = spec->set(cmd_, a); !s.ok()) return Error(s.message());
  given_.push_back({spec, a.value});
  return absl::OkStatus();
}

// Takes the option's value(s) from after '=' or from the next arguments, as its arity says. -h or
// --help as the next argument asks for help instead.
absl::Status Parser::Values(const OptionSpec& spec, OptionArg& a) {
  const absl::string_view n = spec.name, v = spec.value;
  // The values the next arguments give: one for a value not after '=', two for kTwoValues.
  const size_t from_next = a.has_value                       ? 0
                           : spec.arity == Arity::kValue     ? 1
                           : spec.arity == Arity::kTwoValues ? 2
                                                             : 0;
  for (size_t k = 1; k <= from_next && i_ + k < args_.size(); ++k)
    if (args_[i_ + k] == "-h" || args_[i_ + k] == "--help") {
      i_ += k;
      cmd_.help = true;
      return absl::OkStatus();
    }
  switch (spec.arity) {
    case Arity::kSwitch:
      if (a.has_value) return Error(absl::StrCat(n, " takes no value"));
      return absl::OkStatus();
    case Arity::kValue:
      if (!a.has_value) {
        if (i_ + 1 >= args_.size())
          return Error(absl::StrCat(n, " needs a value: ", n, "=", v, " or ", n, " ", v));
        a.value = args_[++i_];
        a.has_value = true;
      }
      break;
    case Arity::kOptionalValue: break;
    case Arity::kTwoValues:
      if (a.has_value)
        return Error(absl::StrCat(n, " takes ", v, " as the next two arguments, not after '=': ", n,
                                  " ", v));
      if (i_ + 2 >= args_.size()) return Error(absl::StrCat(n, " needs ", v, ": ", n, " ", v));
      a.value = args_[++i_];
      a.second = args_[++i_];
      return absl::OkStatus();
  }
  if (a.has_value && a.value.empty())
    return Error(from_next > 0 ? absl::StrCat(n, ": empty ", v)
                               : absl::StrCat(n, "=: missing ", v));
  return absl::OkStatus();
}

absl::Status Parser::Operand(absl::string_view arg) {
  if (cmd_.help || cmd_.version) {  // names nothing either could show
    if (extra_.empty()) extra_ = arg;
    return absl::OkStatus();
  }
  if (!IsGroup(cmd_.id)) {
    cmd_.operands.emplace_back(arg);
    rest_ |= Spec(cmd_.id).rest_after_first;
    return absl::OkStatus();
  }
  const CommandSpec* child = Child(cmd_.id, arg);
  if (child == nullptr)
    return Error(absl::StrCat("unknown ", cmd_.id == CommandId::kTop ? "command" : "subcommand",
                              " '", arg, "'"));
  cmd_.id = child->id;
  given_.clear();  // the group's own options (only --help) end with it
  return absl::OkStatus();
}

absl::Status Parser::CheckOperands() const {
  const CommandSpec& spec = Spec(cmd_.id);
  const size_t n = cmd_.operands.size();
  if (n < spec.min_operands)
    return Error(absl::StrCat("missing ", RequiredOperand(spec.operands, n)));
  if (n > spec.max_operands && !spec.rest_after_first)
    return Error(absl::StrCat("unexpected argument '", cmd_.operands[spec.max_operands], "'"));
  if (spec.check_operands != nullptr) {
    if (absl::Status s = spec.check_operands(cmd_.operands); !s.ok()) return Error(s.message());
  }
  return absl::OkStatus();
}

// Each option given with what it needs and without what it excludes; every required one given.
absl::Status Parser::CheckOptions() const {
  for (const GivenOption& g : given_) {
    const OptionSpec& o = *g.spec;
    if (!o.needs.empty() && !AnyGiven(o.needs))
      return Error(absl::StrCat(o.name, " means nothing without ",
                                absl::StrJoin(absl::StrSplit(o.needs, '|'), " or ")));
    if (!o.excludes.empty() && AnyGiven(o.excludes))
      return Error(absl::StrCat(o.name, " does not combine with ", o.excludes,
                                o.instead.empty() ? "" : ": ", o.instead));
  }
  for (const OptionSpec& o : OptionTable()) {
    if (!o.required || !(o.commands & Cmds(cmd_.id))) continue;
    if (std::none_of(given_.begin(), given_.end(),
                     [&](const GivenOption& g) { return g.spec == &o; }))
      return Error(absl::StrCat("missing ", o.name, "=", o.value));
  }
  return absl::OkStatus();
}

// Whether one of `alternatives` ("--backend=host|--policy") was given.
bool Parser::AnyGiven(absl::string_view alternatives) const {
  for (absl::string_view alt : absl::StrSplit(alternatives, '|')) {
    std::pair<absl::string_view, absl::string_view> nv = absl::StrSplit(alt, '=');
    const bool any_value = alt.find('=') == absl::string_view::npos;
    for (const GivenOption& g : given_)
      if (g.spec->name == nv.first && (any_value || g.value == nv.second)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<Command> ParseArgs(std::span<const absl::string_view> args) {
  return Parser(args).Parse();
}

absl::StatusOr<Command> ParseCommandLine(int argc, char** argv) {
  std::vector<absl::string_view> args(argv + std::min(argc, 1), argv + argc);
  return ParseArgs(args);
}

absl::StatusOr<CommandId> HelpTopic(const std::vector<std::string>& names) {
  CommandId id = CommandId::kTop;
  for (const std::string& name : names) {
    const CommandSpec* c = Child(id, name);
    if (c == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("no command '", name, "' in '", absl::StrJoin(names, " "), "'"));
    id = c->id;
  }
  return id;
}

CommandId TopCommand(CommandId id) {
  while (Spec(id).parent != CommandId::kTop) id = Spec(id).parent;
  return id;
}

}  // namespace nvsentry::sentry
