// The command line's texts, made from the table (sentry/cmd/cli_table.h): each command's usage and
// --help, the errors' usage, and README.md's options tables.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "sentry/cmd/cli.h"
#include "sentry/cmd/cli_table.h"

namespace nvsentry::sentry {
namespace {

constexpr size_t kWidth = 100;

std::vector<const CommandSpec*> Children(CommandId id) {
  std::vector<const CommandSpec*> out;
  for (const CommandSpec& c : CommandTable())
    if (c.parent == id && c.id != id) out.push_back(&c);
  return out;
}

// The options `id` takes, in the table's order; --help too if `with_help`.
std::vector<const OptionSpec*> OptionsOf(CommandId id, bool with_help) {
  std::vector<const OptionSpec*> out;
  for (const OptionSpec& o : OptionTable())
    if ((o.commands & Cmds(id)) && (with_help || o.name != "--help")) out.push_back(&o);
  return out;
}

std::string Path(CommandId id) {
  const CommandSpec& c = Spec(id);
  return id == CommandId::kTop ? std::string(c.name) : absl::StrCat(Path(c.parent), " ", c.name);
}

std::string Spelling(const OptionSpec& o) {
  const std::string alias = o.alias.empty() ? "" : absl::StrCat(o.alias, ", ");
  switch (o.arity) {
    case Arity::kSwitch: return absl::StrCat(alias, o.name);
    case Arity::kValue: return absl::StrCat(alias, o.name, "=", o.value);
    case Arity::kOptionalValue: return absl::StrCat(alias, o.name, "[=", o.value, "]");
    case Arity::kTwoValues: return absl::StrCat(alias, o.name, " ", o.value);
  }
  return "";
}

// What an option does, with what it needs and excludes.
std::string Meaning(const OptionSpec& o) {
  std::string out(o.help);
  if (!o.needs.empty())
    absl::StrAppend(&out, " (needs ", absl::StrJoin(absl::StrSplit(o.needs, '|'), " or "), ")");
  if (!o.excludes.empty()) absl::StrAppend(&out, " (not with ", o.excludes, ")");
  return out;
}

// `text` wrapped at kWidth, its first line starting at column `at`, the others at `indent`.
std::string Wrap(absl::string_view text, size_t indent, size_t at) {
  std::string out;
  size_t col = at;
  bool line_empty = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line_empty && col + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      col = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++col;
    }
    absl::StrAppend(&out, word);
    col += word.size();
    line_empty = false;
  }
  return out + "\n";
}

std::string LeafUsage(CommandId id) {
  const CommandSpec& c = Spec(id);
  std::string out = Path(id);
  const std::vector<const OptionSpec*> options = OptionsOf(id, false);
  if (options.size() > 3) {
    out += " [OPTIONS]";
  } else {
    for (const OptionSpec* o : options)
      absl::StrAppend(&out, o->required ? " " : " [", Spelling(*o), o->required ? "" : "]");
  }
  if (c.rest_after_first) out += " [--]";
  if (!c.operands.empty()) absl::StrAppend(&out, " ", c.operands);
  return out;
}

void UsageLines(CommandId id, std::vector<std::string>* lines) {
  if (Children(id).empty()) {
    lines->push_back(LeafUsage(id));
    return;
  }
  for (const CommandSpec* c : Children(id)) UsageLines(c->id, lines);
  for (const OptionSpec* o : OptionsOf(id, false))
    lines->push_back(absl::StrCat(Path(id), " ", Spelling(*o)));
}

std::string Capitalised(absl::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = absl::ascii_toupper(out[0]);
  return out;
}

// The spelling rules, said once in each command's help.
std::string SpellingRules(CommandId id) {
  const CommandSpec& c = Spec(id);
  const std::vector<const OptionSpec*> options = OptionsOf(id, false);
  std::vector<std::string> rules;
  auto with = [&](Arity arity) {
    std::vector<absl::string_view> names;
    for (const OptionSpec* o : options)
      if (o->arity == arity) names.push_back(o->name);
    return names;
  };
  for (const OptionSpec* o : options) {
    if (o->arity != Arity::kValue) continue;
    rules.push_back(absl::StrCat("an option's value follows '=' or comes as the next argument (",
                                 o->name, "=", o->value, " or ", o->name, " ", o->value, ")"));
    break;
  }
  for (absl::string_view name : with(Arity::kOptionalValue))
    rules.push_back(absl::StrCat(name, " takes its value only after '='"));
  if (std::vector<absl::string_view> two = with(Arity::kTwoValues); !two.empty())
    rules.push_back(absl::StrCat(absl::StrJoin(two, " and "), " take their two values as the next ",
                                 "two arguments and add up when repeated"));
  if (!options.empty())
    rules.push_back(absl::StrCat(with(Arity::kTwoValues).empty() ? "an" : "any other",
                                 " option given again: its last value counts"));
  std::string out = rules.empty() ? "" : Capitalised(absl::StrJoin(rules, "; ")) + ". ";
  if (c.rest_after_first)
    return absl::StrCat(out, "Options come before ", c.operands.substr(0, c.operands.find(' ')),
                        "; all after it (or after --) is its own.");
  return absl::StrCat(out, "Options and operands come in any order; all after -- are operands.");
}

std::string OptionsHelp(CommandId id) {
  const std::vector<const OptionSpec*> options = OptionsOf(id, true);
  size_t column = 0;
  for (const OptionSpec* o : options) column = std::max(column, Spelling(*o).size() + 4);
  column = std::min<size_t>(column, 26);
  std::string out = Children(id).empty() ? "\n" + Wrap(SpellingRules(id), 0, 0) : "";
  std::string section;  // the heading shown last
  for (const OptionSpec* o : options) {
    const std::string heading = !o->heading.empty() ? Capitalised(o->heading)
                                : section.empty()   ? "Options"
                                                    : section;
    if (heading != section) absl::StrAppend(&out, "\n", heading, ":\n");
    section = heading;
    std::string line = absl::StrCat("  ", Spelling(*o));
    line += line.size() + 2 > column ? "\n" + std::string(column, ' ')
                                     : std::string(column - line.size(), ' ');
    std::string text = Meaning(*o);
    if (o->required) absl::StrAppend(&text, " (required)");
    if (!o->defaults.empty()) absl::StrAppend(&text, " (default: ", o->defaults, ")");
    absl::StrAppend(&out, line, Wrap(text, column, column));
  }
  return out;
}

std::string Cell(absl::string_view s) { return absl::StrReplaceAll(s, {{"|", "\\|"}}); }

// One command's options as Markdown tables, one per section of its help.
std::string MarkdownOf(CommandId id) {
  std::string out;
  absl::string_view section;
  for (const OptionSpec* o : OptionsOf(id, false)) {
    if (out.empty() || (!o->heading.empty() && o->heading != section)) {
      section = o->heading;
      absl::StrAppend(&out, out.empty() ? "" : "\n", "**`", Path(id), "`",
                      section.empty() ? "" : ": ", section,
                      "**\n\n| option | what it does | without it |\n| --- | --- | --- |\n");
    }
    absl::StrAppend(&out, "| `", Cell(Spelling(*o)), "` | ", Cell(Meaning(*o)), " | ",
                    o->required ? "required" : Cell(o->defaults), " |\n");
  }
  return out;
}

}  // namespace

std::string UsageText(CommandId id) {
  std::vector<std::string> lines;
  UsageLines(id, &lines);
  return absl::StrCat("usage: ", absl::StrJoin(lines, "\n       "), "\n");
}

std::string UsageError(CommandId id, absl::string_view why) {
  return absl::StrCat(Path(id), ": ", why, "\n", UsageText(id), "try '", Path(id), " --help'\n");
}

std::string HelpText(CommandId id) {
  const CommandSpec& c = Spec(id);
  std::string out = Wrap(absl::StrCat(Path(id), ": ", c.summary, "."), 0, 0);
  absl::StrAppend(&out, "\n", UsageText(id));
  if (std::vector<const CommandSpec*> children = Children(id); !children.empty()) {
    out += "\nCommands:\n";
    for (const CommandSpec* child : children) {
      const size_t pad = child->name.size() < 10 ? 10 - child->name.size() : 1;
      absl::StrAppend(&out, "  ", child->name, std::string(pad, ' '),
                      Wrap(child->summary, 12, 2 + child->name.size() + pad));
    }
  }
  for (absl::string_view paragraph : absl::StrSplit(c.about, "\n\n", absl::SkipEmpty()))
    absl::StrAppend(&out, "\n", Wrap(paragraph, 0, 0));
  return out + OptionsHelp(id);
}

std::string OptionsMarkdown() {
  std::string out;
  for (const CommandSpec& c : CommandTable()) {
    std::string table = MarkdownOf(c.id);
    if (table.empty()) continue;
    if (c.id == CommandId::kRun) table = SpellingRules(c.id) + "\n\n" + table;
    absl::StrAppend(&out, out.empty() ? "" : "\n", table);
  }
  return out;
}

}  // namespace nvsentry::sentry
