#include "abi/reference.h"

#include <map>

#include "abi/firmware.h"
#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nvsentry::abi {
namespace {

std::string S(std::string_view s) { return std::string(s); }

std::string ScalarName(FieldType t) {
  switch (t) {
    case FieldType::kU8: return "u8";
    case FieldType::kU16: return "u16";
    case FieldType::kU32: return "u32";
    case FieldType::kU64: return "u64";
    case FieldType::kS8: return "s8";
    case FieldType::kS16: return "s16";
    case FieldType::kS32: return "s32";
    case FieldType::kS64: return "s64";
    case FieldType::kChar: return "char";
    case FieldType::kStruct: return "struct";
  }
  return "?";
}

void AddRows(std::span<const Field> fields, uint32_t base, const std::string& prefix, int depth,
             std::vector<LayoutRow>& rows) {
  for (const Field& f : fields) {
    const std::string name = prefix + S(f.name);
    rows.push_back(
        {base + f.offset, f.elem_size() * f.count, TypeName(f), f.dir, name, f.alt, depth});
    // Depth limit: the catalogue nests two or three levels; this only keeps a bad table finite.
    if (f.type == FieldType::kStruct && f.sub != nullptr && depth < 8)
      AddRows(f.sub->fields, base + f.offset, name + (f.count > 1 ? "[]." : "."), depth + 1, rows);
  }
}

// Markdown table cells may not hold a bare '|'.
std::string Cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void LayoutTable(std::span<const Field> fields, std::string& md) {
  md += "| Offset | Size | Type | Dir | Field |\n|---|---|---|---|---|\n";
  for (const LayoutRow& r : LayoutRows(fields)) {
    absl::StrAppend(&md, "| ", absl::StrFormat("0x%X", r.offset), " | ", r.size, " | `",
                    Cell(r.type), "` | ", DirName(r.dir), " | `", Cell(r.name), "`",
                    r.alt ? " (union with the field above)" : "", " |\n");
  }
}

void IoctlSection(const IoctlDesc& d, std::string& md) {
  absl::StrAppend(&md, "### ", S(d.name), "\n\n`", CodeString(d), "` · ", DirName(d.dir()), " · ",
                  SizeString(d), " bytes");
  if (!d.fw.always()) absl::StrAppend(&md, " · firmware ", FwRangeString(d.fw));
  if (std::string flags = IoctlFlagsString(d); !flags.empty()) absl::StrAppend(&md, " · ", flags);
  md += "\n\n";
  if (!d.summary.empty()) absl::StrAppend(&md, S(d.summary), "\n\n");
  if (!d.follows.empty())
    absl::StrAppend(&md, "Follows `", S(d.follows),
                    "`: its policy rule (or, without one, the rule of what it follows) governs "
                    "this one too, unless a rule names this one.\n\n");
  for (const CodeAlias& a : d.aliases)
    absl::StrAppend(
        &md, "Also served as `", absl::StrFormat("0x%08X", a.code), "` (", DirName(IocDir(a.code)),
        "), the code ", S(a.client),
        " sends: the same ioctl, read and written as above (Switchbrew's direction).\n\n");
  if (d.flags & kFixedAnswer)
    absl::StrAppend(&md, "Switchbrew gives a fixed answer: ", S(NvErrorName(d.answer)),
                    absl::StrFormat(" (0x%X)", static_cast<uint32_t>(d.answer)), ".\n\n");
  if (d.fields.empty()) {
    md += "No argument.\n\n";
  } else {
    if (d.variable()) absl::StrAppend(&md, "Fixed header (", d.header_size, " bytes):\n\n");
    LayoutTable(d.fields, md);
    md += "\n";
  }
  for (const ArrayDesc& a : d.arrays) {
    absl::StrAppend(&md, "Array `", S(a.name), "` (", DirName(a.dir), "): ");
    if (a.elem == nullptr) {
      md += "no element layout.\n\n";
      continue;
    }
    absl::StrAppend(&md, "`", S(a.elem->name), "` elements of ", a.elem->size, " bytes in ",
                    ArrayBufferString(a.buffer), "; count: ", ArrayCountString(a, d.fields),
                    "; at most ", a.max_count, ".\n\n");
    LayoutTable(a.elem->fields, md);
    md += "\n";
  }
}

}  // namespace

std::string TypeName(const Field& f) {
  std::string base = f.type == FieldType::kStruct
                         ? absl::StrCat("struct ", f.sub != nullptr ? S(f.sub->name) : "?")
                         : ScalarName(f.type);
  if (f.count != 1) absl::StrAppend(&base, "[", f.count, "]");
  return base;
}

std::string IoctlFlagsString(const IoctlDesc& d) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kPure, "pure"},         {kMayBlock, "may block"},
      {kVariable, "variable"}, {kFixedAnswer, "fixed answer"},
      {kUsesIoctl2, "Ioctl2"}, {kUsesIoctl3, "Ioctl3"},
      {kOpaque, "opaque"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((d.flags & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string CodeString(const IoctlDesc& d) {
  std::string s = absl::StrFormat("0x%08X", d.code);
  if (d.variable()) s += " (size varies)";
  return s;
}

std::string SizeString(const IoctlDesc& d) {
  return d.variable() ? absl::StrCat(d.header_size, "+") : absl::StrCat(d.size());
}

std::string FirmwareRangeString(const FwRange& r) { return r.always() ? "all" : FwRangeString(r); }

std::string PermissionString(int bit) {
  if (bit == kNoPermissionBit) return "-";
  for (const PermissionBitDesc& p : PermissionBits())
    if (p.bit == bit) return absl::StrCat(bit, " (", S(p.name), ")");
  return absl::StrCat(bit);
}

std::string ArrayCountString(const ArrayDesc& a, std::span<const Field> header) {
  switch (a.count_from) {
    case CountFrom::kField: {
      std::string name = "?";
      for (const Field& f : header)
        if (f.offset == a.count && f.type == FieldType::kU32) name = S(f.name);
      return absl::StrCat("the u32 `", name, "` at ", absl::StrFormat("0x%X", a.count));
    }
    case CountFrom::kFixed: return absl::StrCat("always ", a.count);
    case CountFrom::kRest: return "the rest of the buffer";
  }
  return "?";
}

std::string ArrayBufferString(Buffer b) {
  switch (b) {
    case Buffer::kMain: return "the main buffer, after the header";
    case Buffer::kIn2: return "the Ioctl2 second input buffer";
    case Buffer::kOut2: return "the Ioctl3 second output buffer";
  }
  return "?";
}

std::vector<LayoutRow> LayoutRows(std::span<const Field> fields) {
  std::vector<LayoutRow> rows;
  AddRows(fields, 0, "", 0, rows);
  return rows;
}

std::string IoctlReferenceMarkdown() {
  std::string md =
      "# Ioctl reference\n\n"
      "_Generated by `nvsentry abi docs` from the catalogue in `abi/`; do not edit by hand. After "
      "changing the catalogue run `build/sentry/nvsentry abi docs > docs/ioctls.md`._\n\n"
      "Directions are the caller's: `in` is read by the driver, `out` written by it, `none` is "
      "padding or a reserved word. Codes use the Linux `_IOC` layout. Firmware ranges are "
      "`[first-end)`, `[first+]`, or `all`. Flags: `pure` changes no driver state, `may block` "
      "may wait, `variable` has arrays after a fixed header (the code's size bits vary), `fixed "
      "answer` is answered with Switchbrew's fixed NvError before any backend, `Ioctl2`/`Ioctl3` "
      "may come through those nvdrv commands with "
      "a second buffer, `opaque` has no known layout. An `alias` is a code a public client sends "
      "for the same ioctl with other direction bits; it is served as the entry, read and written "
      "as the entry's direction says (docs/guest-abi.md).\n\n"
      "## Devices\n\n"
      "| Node | Permission bit | Ioctls | Firmware | Notes |\n|---|---|---|---|---|\n";
  for (const DeviceDesc& dev : Devices()) {
    absl::StrAppend(&md, "| `", S(dev.path), "` | ", PermissionString(dev.permission_bit), " | ",
                    dev.ioctls.size(), " | ", FirmwareRangeString(dev.fw), " | ",
                    (dev.flags & kNeedsDebugMode) ? "needs `--debug-mode`" : "", " |\n");
  }
  md += "\n";
  // Devices that share one table (the channels, the two displays, dbg and prof) get one section.
  std::vector<std::vector<const DeviceDesc*>> groups;
  std::map<const IoctlDesc*, size_t> group_of;
  for (const DeviceDesc& dev : Devices()) {
    auto [it, fresh] = group_of.try_emplace(dev.ioctls.data(), groups.size());
    if (fresh || dev.ioctls.empty()) {
      if (!fresh) it->second = groups.size();
      groups.emplace_back();
    }
    groups[it->second].push_back(&dev);
  }
  for (const auto& group : groups) {
    md += "## ";
    for (size_t i = 0; i < group.size(); ++i)
      absl::StrAppend(&md, i ? ", " : "", S(group[i]->path));
    md += "\n\n";
    std::span<const IoctlDesc> ioctls = group.front()->ioctls;
    if (ioctls.empty()) {
      md += "No ioctls.\n\n";
      continue;
    }
    md += "| Code | Name | Dir | Size | Firmware | Flags |\n|---|---|---|---|---|---|\n";
    for (const IoctlDesc& d : ioctls) {
      std::string code = absl::StrFormat("`0x%08X`", d.code);
      for (const CodeAlias& a : d.aliases)
        absl::StrAppend(&code, absl::StrFormat(", alias `0x%08X`", a.code));
      absl::StrAppend(&md, "| ", code, " | ", Cell(d.name), " | ", DirName(d.dir()), " | ",
                      SizeString(d), " | ", FirmwareRangeString(d.fw), " | ", IoctlFlagsString(d),
                      " |\n");
    }
    md += "\n";
    for (const IoctlDesc& d : ioctls) IoctlSection(d, md);
  }
  return md;
}

}  // namespace nvsentry::abi
