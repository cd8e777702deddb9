#include "policy/parse.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

// Errors come back as values; the sentry is built without relying on exceptions here.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1  // the packaged library is built with exceptions; use the inline parser
#include <toml++/toml.h>

namespace nvsentry::policy {
namespace {

// The Debian Abseil is built with its own string_view; spell std::string_view arguments out.
std::string S(std::string_view v) { return std::string(v); }

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  void Error(const toml::source_region& at, std::string_view msg) {
    errors_.push_back({at.begin.line, at.begin.column,
                       absl::StrCat(S(name_), ":", at.begin.line, ":", at.begin.column, ": ", S(msg))});
  }
  bool ok() const { return errors_.empty(); }
  // In file order (tables are walked in key order).
  std::string Errors() {
    std::stable_sort(errors_.begin(), errors_.end(), [](const auto& a, const auto& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    std::vector<std::string> lines;
    for (const auto& e : errors_) lines.push_back(e.text);
    return absl::StrJoin(lines, "\n");
  }

  // Reports every key of `t` not in `known`.
  void OnlyKeys(const toml::table& t, std::string_view where,
                std::initializer_list<std::string_view> known) {
    for (const auto& [k, v] : t) {
      bool found = false;
      for (std::string_view n : known) found |= S(k.str()) == n;
      if (!found)
        Error(k.source(), absl::StrCat("unknown key '", S(k.str()), "' in ", S(where), "; expected one of: ",
                                       absl::StrJoin(std::vector<std::string>(known.begin(), known.end()), ", ")));
    }
  }

  std::optional<bool> Bool(const toml::node& n) {
    if (auto v = n.value_exact<bool>()) return v;
    Error(n.source(), "expected true or false");
    return std::nullopt;
  }
  std::optional<uint64_t> Uint(const toml::node& n, uint64_t max) {
    auto v = n.value_exact<int64_t>();
    if (!v) {
      Error(n.source(), "expected an integer");
      return std::nullopt;
    }
    if (*v < 0 || static_cast<uint64_t>(*v) > max) {
      Error(n.source(), absl::StrCat("expected an integer from 0 to ", max, ", got ", *v));
      return std::nullopt;
    }
    return static_cast<uint64_t>(*v);
  }
  std::optional<std::string> OneOf(const toml::node& n, std::initializer_list<std::string_view> values) {
    auto v = n.value_exact<std::string>();
    for (std::string_view x : values)
      if (v && *v == x) return v;
    Error(n.source(), absl::StrCat("expected one of \"", absl::StrJoin(std::vector<std::string>(values.begin(), values.end()), "\", \""), "\""));
    return std::nullopt;
  }
  const toml::table* Table(const toml::node& n, std::string_view what) {
    if (const toml::table* t = n.as_table()) return t;
    Error(n.source(), absl::StrCat("expected a table (", S(what), ")"));
    return nullptr;
  }

 private:
  struct Located {
    uint32_t line, column;
    std::string text;
  };
  std::string name_;
  std::vector<Located> errors_;
};

void ReadGuest(Reader& r, const toml::table& t, Policy& p) {
  r.OnlyKeys(t, "[guest]", {"service", "firmware", "permission_mask", "aruid", "debug_mode",
                            "production_mode"});
  if (const toml::node* n = t.get("service")) {
    if (auto s = r.OneOf(*n, {"nvdrv", "nvdrv:a", "nvdrv:s", "nvdrv:t"})) p.service = *s;
  }
  if (const toml::node* n = t.get("firmware")) {
    auto s = n->value_exact<std::string>();
    auto fw = s ? abi::ParseFirmware(*s) : std::nullopt;
    if (!fw || *fw < abi::Fw(1, 0, 0) || *fw > abi::kLatestFirmware)
      r.Error(n->source(), absl::StrCat("expected a firmware version string from \"1.0.0\" to \"",
                                        abi::FirmwareString(abi::kLatestFirmware), "\""));
    else
      p.firmware = *fw;
  }
  p.permission_mask = abi::ServiceMask(p.service, p.firmware).value_or(0);
  if (const toml::node* n = t.get("permission_mask")) {
    if (auto m = r.Uint(*n, 0xFFFF)) {
      p.permission_mask = static_cast<uint32_t>(*m);
      p.mask_explicit = true;
    }
  }
  if (const toml::node* n = t.get("aruid"))
    if (auto v = r.Uint(*n, UINT64_MAX >> 1)) p.aruid = *v;
  if (const toml::node* n = t.get("debug_mode"))
    if (auto v = r.Bool(*n)) p.debug_mode = *v;
  if (const toml::node* n = t.get("production_mode"))
    if (auto v = r.Bool(*n)) p.production_mode = *v;
}

void ReadViolation(Reader& r, const toml::table& t, Policy& p) {
  r.OnlyKeys(t, "[violation]", {"action"});
  if (const toml::node* n = t.get("action")) {
    if (auto a = r.OneOf(*n, {"errno", "kill", "audit"}))
      p.action = *a == "kill" ? Action::kKill : *a == "audit" ? Action::kAudit : Action::kErrno;
  }
}

void ReadBudgets(Reader& r, const toml::table& t, Policy& p) {
  r.OnlyKeys(t, "[budgets]", {"transfer_memory", "open_fds", "nvmap_objects", "channels",
                              "address_spaces", "pinned_bytes"});
  Budgets& b = p.budgets;
  auto u64 = [&](const char* k, uint64_t& out, uint64_t max) {
    if (const toml::node* n = t.get(k))
      if (auto v = r.Uint(*n, max)) out = *v;
  };
  auto u32 = [&](const char* k, uint32_t& out, uint32_t max) {
    if (const toml::node* n = t.get(k))
      if (auto v = r.Uint(*n, max)) out = static_cast<uint32_t>(*v);
  };
  u64("transfer_memory", b.transfer_memory, 0xFFFFFFFFull);  // Initialize's size is a u32
  u32("open_fds", b.open_fds, 1u << 20);
  u32("nvmap_objects", b.nvmap_objects, 1u << 24);
  u32("channels", b.channels, 1u << 16);
  u32("address_spaces", b.address_spaces, 1u << 16);
  u64("pinned_bytes", b.pinned_bytes, 1ull << 48);
}

void ReadDevices(Reader& r, const toml::table& t, Policy& p) {
  for (const auto& [k, v] : t) {
    const abi::DeviceDesc* dev = abi::FindDeviceByPath(S(k.str()));
    if (dev == nullptr) {
      r.Error(k.source(), absl::StrCat("unknown device '", S(k.str()),
                                       "'; `nvsentry abi list` names every device"));
      continue;
    }
    const toml::table* d = r.Table(v, "backend, ioctls");
    if (d == nullptr) continue;
    r.OnlyKeys(*d, absl::StrCat("[devices.\"", S(k.str()), "\"]"), {"backend", "ioctls"});
    DeviceRule rule;
    if (const toml::node* n = d->get("backend")) {
      if (n->value_exact<std::string>() == std::optional<std::string>("host"))
        r.Error(n->source(), "backend \"host\" (passthrough to a host device) is not available yet: "
                             "it comes with a later release; use \"simulated\" or \"deny\"");
      else if (auto b = r.OneOf(*n, {"simulated", "deny"}))
        rule.backend = *b == "deny" ? Backend::kDeny : Backend::kSimulated;
    }
    if (const toml::node* n = d->get("ioctls"))
      if (auto s = r.OneOf(*n, {"allow", "deny"})) rule.ioctls = *s == "deny" ? Verdict::kDeny : Verdict::kAllow;
    p.devices[dev->id] = rule;
  }
}

// Every catalogue entry a key names: by name, or by code ("0xC0080014"; a variable ioctl's code
// with any size bits).
std::vector<const abi::IoctlDesc*> Named(std::string_view key) {
  std::vector<const abi::IoctlDesc*> out;
  uint32_t code = 0;
  bool by_code = key.starts_with("0x") || key.starts_with("0X");
  if (by_code) {
    std::string hex(key.substr(2));
    char* end = nullptr;
    errno = 0;
    unsigned long v = strtoul(hex.c_str(), &end, 16);
    if (hex.empty() || *end != 0 || errno != 0 || v > 0xFFFFFFFFul) return out;
    code = static_cast<uint32_t>(v);
  }
  for (const abi::NamedIoctl& n : abi::AllIoctls()) {
    bool match = by_code ? n.ioctl->Matches(code) : n.ioctl->name == key;
    bool seen = false;
    for (const abi::IoctlDesc* d : out) seen |= d == n.ioctl;
    if (match && !seen) out.push_back(n.ioctl);
  }
  return out;
}

bool IsIntegerScalar(const abi::Field& f) {
  return f.type != abi::FieldType::kChar && f.type != abi::FieldType::kStruct && f.count == 1;
}

void ReadIoctl(Reader& r, const toml::key& key, const toml::table& t, Policy& p) {
  std::vector<const abi::IoctlDesc*> descs = Named(S(key.str()));
  if (descs.empty()) {
    r.Error(key.source(), absl::StrCat("unknown ioctl '", S(key.str()),
                                       "'; expected a name or code from `nvsentry abi list DEVICE`"));
    return;
  }
  r.OnlyKeys(t, absl::StrCat("[ioctls.", S(key.str()), "]"), {"allow", "arrays", "fields"});
  IoctlRule rule;
  if (const toml::node* n = t.get("allow"))
    if (auto v = r.Bool(*n)) rule.verdict = *v ? Verdict::kAllow : Verdict::kDeny;
  if (rule.verdict == Verdict::kDeny && (t.contains("arrays") || t.contains("fields")))
    r.Error(key.source(), "allow = false contradicts limits on arrays or fields: a denied ioctl has none");
  for (const abi::IoctlDesc* d : descs) {
    IoctlRule mine = rule;
    if (const toml::node* n = t.get("arrays")) {
      if (const toml::table* a = r.Table(*n, "array name = largest count")) {
        mine.array_limits.clear();
        for (const abi::ArrayDesc& ad : d->arrays) mine.array_limits.push_back(ad.max_count);
        for (const auto& [ak, av] : *a) {
          size_t i = 0;
          while (i < d->arrays.size() && d->arrays[i].name != S(ak.str())) ++i;
          if (i == d->arrays.size()) {
            r.Error(ak.source(), absl::StrCat(S(d->name), " has no array '", S(ak.str()), "'"));
            continue;
          }
          if (auto v = r.Uint(av, d->arrays[i].max_count)) mine.array_limits[i] = static_cast<uint32_t>(*v);
        }
      }
    }
    if (const toml::node* n = t.get("fields")) {
      if (const toml::table* f = r.Table(*n, "field name = { max, bits, one_of }")) {
        for (const auto& [fk, fv] : *f) {
          const abi::Field* field = nullptr;
          for (const abi::Field& x : d->fields)
            if (x.name == S(fk.str())) field = &x;
          if (field == nullptr || !IsIntegerScalar(*field) || !abi::DirHasIn(field->dir)) {
            r.Error(fk.source(), absl::StrCat(S(d->name), " has no integer input field '", S(fk.str()), "'"));
            continue;
          }
          const toml::table* c = r.Table(fv, "max, bits, one_of");
          if (c == nullptr) continue;
          r.OnlyKeys(*c, absl::StrCat("fields.", S(fk.str())), {"max", "bits", "one_of"});
          const uint64_t top = field->elem_size() >= 8 ? UINT64_MAX >> 1
                                                       : (uint64_t{1} << (8 * field->elem_size())) - 1;
          FieldRule fr{field, std::nullopt, std::nullopt, {}};
          if (const toml::node* m = c->get("max")) fr.max = r.Uint(*m, top);
          if (const toml::node* b = c->get("bits")) fr.bits = r.Uint(*b, top);
          if (const toml::node* o = c->get("one_of")) {
            if (const toml::array* arr = o->as_array()) {
              for (const toml::node& e : *arr)
                if (auto v = r.Uint(e, top)) fr.one_of.push_back(*v);
            } else {
              r.Error(o->source(), "expected an array of integers");
            }
          }
          mine.fields.push_back(fr);
        }
      }
    }
    p.ioctls[d] = std::move(mine);
  }
}

}  // namespace

absl::StatusOr<Policy> ParsePolicy(std::string_view text, std::string_view name) {
  toml::parse_result parsed = toml::parse(text, name);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(S(name), ":", e.source().begin.line, ":",
                                                   e.source().begin.column, ": ", S(e.description())));
  }
  const toml::table& root = parsed.table();
  Reader r(name);
  Policy p = DefaultPolicy();
  p.source = std::string(name);
  r.OnlyKeys(root, "the policy", {"guest", "violation", "budgets", "devices", "ioctls"});
  // [guest] first: the mask depends on service and firmware.
  if (const toml::node* n = root.get("guest"))
    if (const toml::table* t = r.Table(*n, "[guest]")) ReadGuest(r, *t, p);
  if (const toml::node* n = root.get("violation"))
    if (const toml::table* t = r.Table(*n, "[violation]")) ReadViolation(r, *t, p);
  if (const toml::node* n = root.get("budgets"))
    if (const toml::table* t = r.Table(*n, "[budgets]")) ReadBudgets(r, *t, p);
  if (const toml::node* n = root.get("devices"))
    if (const toml::table* t = r.Table(*n, "[devices.\"/dev/...\"]")) ReadDevices(r, *t, p);
  if (const toml::node* n = root.get("ioctls")) {
    if (const toml::table* t = r.Table(*n, "[ioctls.NAME]")) {
      for (const auto& [k, v] : *t)
        if (const toml::table* it = r.Table(v, "allow, arrays, fields")) ReadIoctl(r, k, *it, p);
    }
  }
  if (!r.ok()) return absl::InvalidArgumentError(r.Errors());
  return p;
}

absl::StatusOr<Policy> LoadPolicy(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read: ", strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePolicy(ss.str(), path);
}

}  // namespace nvsentry::policy
