#include "sentry/cmd/abi_cmd.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/reference.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sentry/cmd/help_cmd.h"

namespace nvsentry::sentry {
namespace {

std::string S(std::string_view s) { return std::string(s); }

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Column padding leaves spaces at the ends of lines; drop them.
std::string TrimLineEnds(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl;
    size_t last = end;
    while (last > start && text[last - 1] == ' ') --last;
    out.append(text, start, last - start);
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

int Usage(FILE* err, std::string_view why) {
  fputs(UsageError(CommandId::kAbiShow, S(why)).c_str(), err);
  return 2;
}

std::string ListDevices() {
  std::string out = absl::StrFormat("%-22s %-17s %6s  %-18s %s\n", "DEVICE", "PERMISSION", "IOCTLS",
                                    "FIRMWARE", "NOTES");
  for (const abi::DeviceDesc& d : abi::Devices()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%-22s %-17s %6d  %-18s %s\n", S(d.path),
                                    abi::PermissionString(d.permission_bit), d.ioctls.size(),
                                    abi::FirmwareRangeString(d.fw),
                                    (d.flags & abi::kNeedsDebugMode) ? "needs --debug-mode" : ""));
  }
  return TrimLineEnds(out);
}

std::string ListIoctls(const abi::DeviceDesc& dev) {
  std::string out = absl::StrCat(S(dev.path), ": ", dev.ioctls.size(), " ioctls\n");
  absl::StrAppend(&out, absl::StrFormat("%-10s  %-48s %-5s %6s  %-18s %s\n", "CODE", "NAME", "DIR",
                                        "SIZE", "FIRMWARE", "FLAGS"));
  for (const abi::IoctlDesc& d : dev.ioctls) {
    absl::StrAppend(&out,
                    absl::StrFormat("0x%08X  %-48s %-5s %6s  %-18s %s\n", d.code, S(d.name),
                                    abi::DirName(d.dir()), abi::SizeString(d),
                                    abi::FirmwareRangeString(d.fw), abi::IoctlFlagsString(d)));
  }
  return TrimLineEnds(out);
}

std::string LayoutText(std::span<const abi::Field> fields, const char* indent) {
  std::string out = absl::StrFormat("%s%-7s %5s  %-5s  %-20s %s\n", indent, "OFFSET", "SIZE", "DIR",
                                    "TYPE", "NAME");
  for (const abi::LayoutRow& r : abi::LayoutRows(fields)) {
    absl::StrAppend(&out, absl::StrFormat("%s0x%04X  %5u  %-5s  %-20s %s%s\n", indent, r.offset,
                                          r.size, abi::DirName(r.dir), r.type, r.name,
                                          r.alt ? "  (union with the field above)" : ""));
  }
  return out;
}

std::string ShowIoctl(const abi::IoctlDesc& d, const std::vector<const abi::DeviceDesc*>& devices) {
  std::string out = S(d.name);
  for (size_t i = 0; i < devices.size(); ++i)
    absl::StrAppend(&out, i == 0 ? " on " : ", ", S(devices[i]->path));
  out += "\n";
  absl::StrAppend(&out, "  code      ", abi::CodeString(d),
                  absl::StrFormat(": dir %s, magic 0x%02X, nr 0x%02X, ", abi::DirName(d.dir()),
                                  abi::IocMagic(d.code), abi::IocNr(d.code)),
                  d.variable() ? absl::StrCat("header ", d.header_size, " bytes then arrays")
                               : absl::StrCat("size ", d.size()),
                  "\n");
  for (const abi::CodeAlias& a : d.aliases)
    absl::StrAppend(&out, "  alias     ", absl::StrFormat("0x%08X", a.code), ", dir ",
                    abi::DirName(abi::IocDir(a.code)), " (", S(a.client),
                    "): served as the code above, its direction and layout\n");
  absl::StrAppend(&out, "  firmware  ", abi::FirmwareRangeString(d.fw), "\n");
  if (std::string flags = abi::IoctlFlagsString(d); !flags.empty())
    absl::StrAppend(&out, "  flags     ", flags, "\n");
  if (!d.summary.empty()) absl::StrAppend(&out, "  summary   ", S(d.summary), "\n");
  if (!d.follows.empty())
    absl::StrAppend(&out, "  policy    follows ", S(d.follows),
                    ": its rule (or, without one, the rule of what it follows) governs this one "
                    "too, unless a rule names this one\n");
  if (d.flags & abi::kFixedAnswer)
    absl::StrAppend(&out, "  answer    ", S(abi::NvErrorName(d.answer)),
                    absl::StrFormat(" (0x%X)", static_cast<uint32_t>(d.answer)),
                    ", fixed by Switchbrew (given without reaching the GPU)\n");
  if (d.fields.empty()) {
    out += "  layout    no argument\n";
  } else {
    absl::StrAppend(&out, "  layout    ", d.fixed_size(),
                    d.variable() ? " bytes of header\n" : " bytes\n", LayoutText(d.fields, "    "));
  }
  for (const abi::ArrayDesc& a : d.arrays) {
    absl::StrAppend(&out, "  array     ", S(a.name), " (", abi::DirName(a.dir), "): ");
    if (a.elem == nullptr) {
      out += "no element layout\n";
      continue;
    }
    absl::StrAppend(&out, S(a.elem->name), " elements of ", a.elem->size, " bytes in ",
                    abi::ArrayBufferString(a.buffer),
                    "; count: ", abi::ArrayCountString(a, d.fields), "; at most ", a.max_count,
                    "\n", LayoutText(a.elem->fields, "    "));
  }
  return out;
}

// Every ioctl `what` names: a code (0x...), else a name (exact, or a suffix after '_' such as
// SUBMIT_GPFIFO), grouped so that a table shared by several devices is shown once.
int Show(const std::string& what, FILE* out, FILE* err) {
  std::vector<std::pair<const abi::IoctlDesc*, std::vector<const abi::DeviceDesc*>>> found;
  auto add = [&](const abi::NamedIoctl& n) {
    for (auto& [d, devs] : found) {
      if (d == n.ioctl) {
        devs.push_back(n.device);
        return;
      }
    }
    found.push_back({n.ioctl, {n.device}});
  };
  if (what.empty()) return Usage(err, "show needs a NAME or 0xCODE");
  if (what.starts_with("0x") || what.starts_with("0X")) {
    uint32_t code = 0;
    if (what.size() < 3 || !absl::SimpleHexAtoi(what.substr(2), &code))
      return Usage(err, absl::StrCat("'", what, "' is not a 32-bit hex code"));
    for (const abi::NamedIoctl& n : abi::AllIoctls())
      if (n.ioctl->Matches(code) || n.ioctl->code == code) add(n);
  } else {
    const std::string want = Upper(what);
    for (const abi::NamedIoctl& n : abi::AllIoctls())
      if (Upper(n.ioctl->name) == want) add(n);
    if (found.empty()) {
      for (const abi::NamedIoctl& n : abi::AllIoctls())
        if (Upper(n.ioctl->name).ends_with("_" + want)) add(n);
    }
  }
  if (found.empty()) {
    fprintf(err,
            "nvsentry abi: no ioctl named or coded '%s'; `nvsentry abi list DEVICE` lists them\n",
            what.c_str());
    return 1;
  }
  std::string text;
  for (size_t i = 0; i < found.size(); ++i)
    absl::StrAppend(&text, i ? "\n" : "", ShowIoctl(*found[i].first, found[i].second));
  fputs(text.c_str(), out);
  return 0;
}

// `list [DEVICE]`: the devices, or one device's ioctls.
int List(const std::vector<std::string>& operands, FILE* out, FILE* err) {
  if (operands.empty()) {
    fputs(ListDevices().c_str(), out);
    return 0;
  }
  const std::string& name = operands[0];
  const abi::DeviceDesc* dev = abi::FindDeviceByPath(name.starts_with("/") ? name : "/dev/" + name);
  if (dev == nullptr) {
    fprintf(err, "nvsentry abi: no device '%s'; `nvsentry abi list` lists them\n", name.c_str());
    return 1;
  }
  fputs(ListIoctls(*dev).c_str(), out);
  return 0;
}

}  // namespace

int RunAbiCommand(const Command& cmd, FILE* out, FILE* err) {
  switch (cmd.id) {
    case CommandId::kAbiList: return List(cmd.operands, out, err);
    case CommandId::kAbiShow: return Show(cmd.operands[0], out, err);
    case CommandId::kAbiDocs: fputs(abi::IoctlReferenceMarkdown().c_str(), out); return 0;
    default: fputs(UsageError(cmd.id, "not an abi subcommand").c_str(), err); return 2;
  }
}

int RunAbiCommand(const std::vector<std::string>& args, FILE* out, FILE* err) {
  return ParseAndRun("abi", args, out, err,
                     [](const Command& c, FILE* o, FILE* e) { return RunAbiCommand(c, o, e); });
}

}  // namespace nvsentry::sentry
