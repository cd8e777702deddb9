#include "policy/parse.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include "abi/gpu_classes.h"
#include "abi/services.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

// Errors come back as values; the sentry is built without relying on exceptions here.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1  // the packaged library is built with exceptions; use the inline parser
#include <toml++/toml.h>

namespace nvsentry::policy {
namespace {

// The Debian Abseil is built with its own string_view; spell std::string_view arguments out.
std::string S(std::string_view v) { return std::string(v); }

// "64MiB", "512 KiB", "4096", "1GiB": nullopt when malformed or above 2^63.
std::optional<uint64_t> ParseSize(std::string_view s) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (v > (UINT64_MAX >> 1) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  }
  if (i == 0) return std::nullopt;
  while (i < s.size() && s[i] == ' ') ++i;
  const std::string_view unit = s.substr(i);
  int shift = -1;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "KiB")
    shift = 10;
  else if (unit == "MiB")
    shift = 20;
  else if (unit == "GiB")
    shift = 30;
  if (shift < 0 || v > ((UINT64_MAX >> 1) >> shift)) return std::nullopt;
  return v << shift;
}

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  void Error(const toml::source_region& at, std::string_view msg) {
    errors_.push_back(
        {at.begin.line, at.begin.column,
         absl::StrCat(S(name_), ":", at.begin.line, ":", at.begin.column, ": ", S(msg))});
  }
  bool ok() const { return errors_.empty(); }
  // In file order (tables are walked in key order). A rule that covers several catalogue entries
  // (firmware variants) checks the same key once per entry: each message is said once.
  std::string Errors() {
    std::stable_sort(errors_.begin(), errors_.end(), [](const auto& a, const auto& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    std::vector<std::string> lines;
    for (const auto& e : errors_)
      if (std::find(lines.begin(), lines.end(), e.text) == lines.end()) lines.push_back(e.text);
    return absl::StrJoin(lines, "\n");
  }

  // Reports every key of `t` not in `known`.
  void OnlyKeys(const toml::table& t, std::string_view where,
                std::initializer_list<std::string_view> known) {
    for (const auto& [k, v] : t) {
      bool found = false;
      for (std::string_view n : known) found |= S(k.str()) == n;
      if (!found)
        Error(k.source(),
              absl::StrCat(
                  "unknown key '", S(k.str()), "' in ", S(where), "; expected one of: ",
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
  // A byte count: an integer, or a string "N", "N KiB", "N MiB", "N GiB" (binary units).
  std::optional<uint64_t> Size(const toml::node& n, uint64_t max) {
    if (n.is_integer()) return Uint(n, max);
    std::optional<std::string> s = n.value_exact<std::string>();
    std::optional<uint64_t> v = s ? ParseSize(*s) : std::nullopt;
    if (!v || *v > max) {
      Error(n.source(),
            absl::StrCat("expected a size from 0 to ", max,
                         " bytes: an integer or a string like \"64MiB\" (B, KiB, MiB, GiB)"));
      return std::nullopt;
    }
    return v;
  }
  std::optional<std::string> OneOf(const toml::node& n,
                                   std::initializer_list<std::string_view> values) {
    auto v = n.value_exact<std::string>();
    for (std::string_view x : values)
      if (v && *v == x) return v;
    Error(
        n.source(),
        absl::StrCat(
            "expected one of \"",
            absl::StrJoin(std::vector<std::string>(values.begin(), values.end()), "\", \""), "\""));
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
  r.OnlyKeys(t, "[guest]",
             {"service", "firmware", "permission_mask", "aruid", "debug_mode", "production_mode"});
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
  r.OnlyKeys(t, "[budgets]",
             {"transfer_memory", "open_fds", "nvmap_objects", "channels", "address_spaces",
              "pinned_bytes", "mappings", "parked_waits", "queued_bytes", "twin_bytes"});
  Budgets& b = p.budgets;
  auto bytes = [&](const char* k, uint64_t& out, uint64_t max) {
    if (const toml::node* n = t.get(k))
      if (auto v = r.Size(*n, max)) out = *v;
  };
  auto u32 = [&](const char* k, uint32_t& out, uint32_t max) {
    if (const toml::node* n = t.get(k))
      if (auto v = r.Uint(*n, max)) out = static_cast<uint32_t>(*v);
  };
  bytes("transfer_memory", b.transfer_memory, 0xFFFFFFFFull);  // Initialize's size is a u32
  u32("open_fds", b.open_fds, 1u << 20);
  u32("nvmap_objects", b.nvmap_objects, 1u << 24);
  u32("channels", b.channels, 1u << 16);
  u32("address_spaces", b.address_spaces, 1u << 16);
  bytes("pinned_bytes", b.pinned_bytes, 1ull << 48);
  u32("mappings", b.mappings, 1u << 24);
  u32("parked_waits", b.parked_waits, 1u << 20);
  bytes("queued_bytes", b.queued_bytes, 1ull << 40);
  bytes("twin_bytes", b.twin_bytes, 1ull << 48);
}

void CheckOpens(Reader& r, const toml::node& at, const abi::DeviceDesc& dev, const Policy& p,
                std::string_view word) {
  if (!dev.fw.Contains(p.firmware)) {
    r.Error(at.source(), absl::StrCat("backend \"", std::string(word), "\" for ", S(dev.path),
                                      ", which firmware ", abi::FirmwareString(p.firmware),
                                      " does not have (only ", abi::FwRangeString(dev.fw),
                                      "); use \"deny\" or drop the table"));
    return;
  }
  const int bit = dev.permission_bit;
  if (bit == abi::kNoPermissionBit || (p.permission_mask >> bit) & 1) return;
  std::string_view name;
  for (const abi::PermissionBitDesc& b : abi::PermissionBits())
    if (b.bit == bit) name = b.name;
  r.Error(at.source(),
          absl::StrCat("backend \"", std::string(word), "\" contradicts the permission mask ",
                       absl::StrFormat("0x%X", p.permission_mask), ": ", S(dev.path), " needs bit ",
                       bit, " (", S(name),
                       "); use \"deny\" or set "
                       "permission_mask in [guest]"));
}

// The GPU's five devices share their objects: on the host together or not at all. The devices
// that use those objects without being translated cannot then be simulated.
void CheckHostBackend(
    Reader& r,
    const absl::flat_hash_map<abi::DeviceId, std::pair<Backend, toml::source_region>>& said,
    const Policy& p) {
  std::optional<toml::source_region> host_at;
  for (const auto& [id, b] : said)
    if (b.first == Backend::kHost && (!host_at || b.second.begin < host_at->begin))
      host_at = b.second;
  if (!host_at) return;
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    if (!dev.fw.Contains(p.firmware)) continue;
    auto it = said.find(dev.id);
    if (HostCapable(dev.id) && (it == said.end() || it->second.first != Backend::kHost) &&
        p.Device(dev.id).backend != Backend::kDeny)
      r.Error(it == said.end() ? *host_at : it->second.second,
              absl::StrCat("backend \"host\" is for the GPU's five devices together (they share "
                           "nvmap objects, address spaces and syncpoints): ",
                           S(dev.path), " must say backend = \"host\" too, or \"deny\""));
    if (UsesGpuObjects(dev.id) && it != said.end() && it->second.first == Backend::kSimulated)
      r.Error(it->second.second,
              absl::StrCat("backend \"simulated\" for ", S(dev.path),
                           " with the GPU on the host: it would use the host's objects, which the "
                           "simulator does not have; it can only be \"deny\" (the default then)"));
  }
}

void ReadDevices(Reader& r, const toml::table& t, Policy& p) {
  // Where each device's backend was said, for the checks across devices below.
  absl::flat_hash_map<abi::DeviceId, std::pair<Backend, toml::source_region>> backend_at;
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
      if (auto b = r.OneOf(*n, {"simulated", "deny", "host"})) {
        rule.backend = *b == "deny"   ? Backend::kDeny
                       : *b == "host" ? Backend::kHost
                                      : Backend::kSimulated;
        // Saying "simulated" for a node the guest can never open is a mistake worth naming (a
        // missing debug_mode is not: that node opens and answers NotSupported, as in Switchbrew).
        if (rule.backend != Backend::kDeny) CheckOpens(r, *n, *dev, p, *b);
        if (rule.backend == Backend::kHost && !HostCapable(dev->id))
          r.Error(n->source(),
                  absl::StrCat("backend \"host\" for ", S(dev->path),
                               ": the host backend translates only /dev/nvhost-ctrl, /dev/nvmap, "
                               "/dev/nvhost-as-gpu, /dev/nvhost-ctrl-gpu and /dev/nvhost-gpu; use "
                               "\"simulated\" or \"deny\""));
        if (rule.backend != Backend::kDeny) backend_at[dev->id] = {rule.backend, n->source()};
      }
    }
    if (const toml::node* n = d->get("ioctls"))
      if (auto s = r.OneOf(*n, {"allow", "deny"}))
        rule.ioctls = *s == "deny" ? Verdict::kDeny : Verdict::kAllow;
    p.devices[dev->id] = rule;
  }
  CheckHostBackend(r, backend_at, p);
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

const abi::Field* InputField(const abi::IoctlDesc& d, std::string_view name) {
  for (const abi::Field& x : d.fields)
    if (x.name == name && IsIntegerScalar(x) && abi::DirHasIn(x.dir)) return &x;
  return nullptr;
}

int ArrayIndex(const abi::IoctlDesc& d, std::string_view name) {
  for (size_t i = 0; i < d.arrays.size(); ++i)
    if (d.arrays[i].name == name) return static_cast<int>(i);
  return -1;
}

// The names a key may use, over every entry the rule covers ("none" when there are none).
std::string Choices(const std::vector<const abi::IoctlDesc*>& descs, bool arrays) {
  std::vector<std::string> names;
  auto add = [&](std::string_view n) {
    if (std::find(names.begin(), names.end(), S(n)) == names.end()) names.push_back(S(n));
  };
  for (const abi::IoctlDesc* d : descs) {
    if (arrays)
      for (const abi::ArrayDesc& a : d->arrays) add(a.name);
    else
      for (const abi::Field& f : d->fields)
        if (InputField(*d, f.name) != nullptr) add(f.name);
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// One [ioctls.KEY] table. The rule covers every catalogue entry the key names (firmware variants
// too): an array or field name must exist in at least one of them and limits the ones that have it.
void ReadIoctl(Reader& r, const toml::key& key, const toml::table& t, Policy& p) {
  const std::string what = S(key.str());
  std::vector<const abi::IoctlDesc*> descs = Named(what);
  if (descs.empty()) {
    r.Error(key.source(),
            absl::StrCat("unknown ioctl '", what,
                         "'; expected a name or code from `nvsentry abi list DEVICE`"));
    return;
  }
  r.OnlyKeys(t, absl::StrCat("[ioctls.", what, "]"), {"allow", "arrays", "fields"});
  IoctlRule rule;
  if (const toml::node* n = t.get("allow"))
    if (auto v = r.Bool(*n)) rule.verdict = *v ? Verdict::kAllow : Verdict::kDeny;
  if (rule.verdict == Verdict::kDeny && (t.contains("arrays") || t.contains("fields")))
    r.Error(key.source(),
            "allow = false contradicts limits on arrays or fields: a denied ioctl has none");

  const toml::table* arrays = nullptr;
  if (const toml::node* n = t.get("arrays")) arrays = r.Table(*n, "array name = largest count");
  const toml::table* fields = nullptr;
  if (const toml::node* n = t.get("fields"))
    fields = r.Table(*n, "field name = { max, bits, one_of }");
  // Names first, once: a name no covered entry has is the mistake, whatever the variant.
  if (arrays != nullptr)
    for (const auto& [ak, av] : *arrays) {
      bool any = false;
      for (const abi::IoctlDesc* d : descs) any |= ArrayIndex(*d, S(ak.str())) >= 0;
      if (!any)
        r.Error(ak.source(), absl::StrCat(what, " has no array '", S(ak.str()),
                                          "'; its arrays: ", Choices(descs, true)));
    }
  if (fields != nullptr)
    for (const auto& [fk, fv] : *fields) {
      bool any = false;
      for (const abi::IoctlDesc* d : descs) any |= InputField(*d, S(fk.str())) != nullptr;
      if (!any)
        r.Error(fk.source(), absl::StrCat(what, " has no integer input field '", S(fk.str()),
                                          "'; its integer input fields: ", Choices(descs, false)));
      else if (const toml::table* c = r.Table(fv, "max, bits, one_of"))
        r.OnlyKeys(*c, absl::StrCat("fields.", S(fk.str())), {"max", "bits", "one_of"});
    }

  for (const abi::IoctlDesc* d : descs) {
    IoctlRule mine = rule;
    if (arrays != nullptr) {
      for (const abi::ArrayDesc& ad : d->arrays) mine.array_limits.push_back(ad.max_count);
      for (const auto& [ak, av] : *arrays) {
        const int i = ArrayIndex(*d, S(ak.str()));
        if (i < 0) continue;
        if (auto v = r.Uint(av, d->arrays[i].max_count))
          mine.array_limits[i] = static_cast<uint32_t>(*v);
      }
    }
    if (fields != nullptr) {
      for (const auto& [fk, fv] : *fields) {
        const abi::Field* field = InputField(*d, S(fk.str()));
        const toml::table* c = fv.as_table();
        if (field == nullptr || c == nullptr) continue;
        const uint64_t top = field->elem_size() >= 8
                                 ? UINT64_MAX >> 1
                                 : (uint64_t{1} << (8 * field->elem_size())) - 1;
        FieldRule fr{field, std::nullopt, std::nullopt, {}};
        if (const toml::node* m = c->get("max")) fr.max = r.Uint(*m, top);
        if (const toml::node* b = c->get("bits")) fr.bits = r.Uint(*b, top);
        if (const toml::node* o = c->get("one_of")) {
          if (const toml::array* arr = o->as_array()) {
            // An empty list would read as "nothing allowed" but the model means "anything".
            if (arr->empty())
              r.Error(o->source(), "expected at least one value in one_of (or no one_of)");
            for (const toml::node& e : *arr)
              if (auto v = r.Uint(e, top)) fr.one_of.push_back(*v);
          } else {
            r.Error(o->source(), "expected an array of integers");
          }
        }
        mine.fields.push_back(fr);
      }
    }
    p.ioctls[d] = std::move(mine);
  }
}

std::string ClassList() {
  std::vector<std::string> v;
  for (const abi::GpuClass& c : abi::kGpuClasses)
    v.push_back(absl::StrFormat("0x%04X (%s)", c.number, S(c.name)));
  return absl::StrJoin(v, ", ");
}

// [channels]: read after [devices] and [ioctls], which decide whether a channel can ever have the
// graphics object context the graphics-engine classes need.
void ReadChannels(Reader& r, const toml::table& t, Policy& p) {
  r.OnlyKeys(t, "[channels]", {"classes"});
  const toml::node* n = t.get("classes");
  if (n == nullptr) return;
  const toml::array* arr = n->as_array();
  if (arr == nullptr) {
    r.Error(n->source(),
            "expected an array of class numbers, e.g. [0xB197, 0xB0B5] ([] binds none)");
    return;
  }
  const bool graphics = AllowsGraphicsContext(p);
  std::vector<uint32_t> classes;
  for (const toml::node& e : *arr) {
    std::optional<uint64_t> v = r.Uint(e, 0xFFFF);
    if (!v) continue;
    const uint32_t cls = static_cast<uint32_t>(*v);
    const abi::GpuClass* c = abi::FindGpuClass(cls);
    if (c == nullptr) {
      r.Error(e.source(), absl::StrFormat("0x%X is not a GM20B engine class; expected one of %s",
                                          cls, ClassList()));
      continue;
    }
    if (std::find(classes.begin(), classes.end(), cls) != classes.end()) {
      r.Error(e.source(), absl::StrFormat("class 0x%04X is listed twice", cls));
      continue;
    }
    if (c->engine == abi::GpuEngine::kGraphics && !graphics)
      r.Error(
          e.source(),
          absl::StrFormat("class 0x%04X (%s) runs on the graphics engine, which needs a graphics "
                          "object context, and this policy never lets a channel allocate one "
                          "(NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX is denied or its class_num rule "
                          "allows none of 0xB197, 0xB1C0, 0x902D, 0xA140); drop the class or "
                          "allow the context",
                          cls, S(c->name)));
    classes.push_back(cls);
  }
  std::sort(classes.begin(), classes.end());
  p.channel_classes = std::move(classes);
}

}  // namespace

absl::StatusOr<Policy> ParsePolicy(std::string_view text, std::string_view name) {
  toml::parse_result parsed = toml::parse(text, name);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(S(name), ":", e.source().begin.line, ":",
                                                   e.source().begin.column, ": ",
                                                   S(e.description())));
  }
  const toml::table& root = parsed.table();
  Reader r(name);
  Policy p = DefaultPolicy();
  p.source = std::string(name);
  r.OnlyKeys(root, "the policy",
             {"guest", "violation", "budgets", "devices", "ioctls", "channels"});
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
  if (const toml::node* n = root.get("channels"))
    if (const toml::table* t = r.Table(*n, "[channels]")) ReadChannels(r, *t, p);
  if (!r.ok()) return absl::InvalidArgumentError(r.Errors());
  ResolveFollowers(p);
  return p;
}

absl::StatusOr<Policy> LoadPolicy(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read: ", strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePolicy(ss.str(), path);
}

}  // namespace nvsentry::policy
