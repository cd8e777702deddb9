#include "policy/render.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "abi/devices/nvdrv.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvmap.h"
#include "abi/gpu_classes.h"
#include "abi/nverror.h"
#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace nvsentry::policy {
namespace {

std::string S(std::string_view v) { return std::string(v); }
std::string Hex(uint64_t v) { return absl::StrFormat("0x%X", v); }
const char* ActionName(Action a) {
  return a == Action::kKill ? "kill" : a == Action::kAudit ? "audit" : "errno";
}

// The rules that matter on the policy's firmware, by ioctl name, in catalogue order. A file names
// ioctls, and a name covers every firmware variant of it; only the variant the firmware uses is
// enforced, so its rule is the one written (the other variants' rules cannot change anything).
struct NamedRule {
  std::string name;
  const abi::IoctlDesc* desc;
  const IoctlRule* rule;
};
std::vector<NamedRule> RulesByName(const Policy& p) {
  std::vector<NamedRule> out;
  std::set<std::string> seen;
  for (const abi::NamedIoctl& n : abi::AllIoctls()) {
    if (!n.ioctl->fw.Contains(p.firmware)) continue;
    auto it = p.ioctls.find(n.ioctl);
    if (it == p.ioctls.end() || !seen.insert(S(n.ioctl->name)).second) continue;
    out.push_back({S(n.ioctl->name), n.ioctl, &it->second});
  }
  return out;
}

std::string BitName(int bit) {
  for (const abi::PermissionBitDesc& b : abi::PermissionBits())
    if (b.bit == bit) return absl::StrCat("bit ", bit, " (", S(b.name), ")");
  return absl::StrCat("bit ", bit);
}

// Why `dev` does not open for `p` (every reason, "; " between them), or "" when it does.
std::string WhyNot(const Policy& p, const abi::DeviceDesc& dev) {
  std::vector<std::string> why;
  if (!dev.fw.Contains(p.firmware)) why.push_back("not on this firmware");
  if (p.Device(dev.id).backend == Backend::kDeny) why.push_back("backend deny");
  if (dev.permission_bit >= 0 && !(p.permission_mask & (1u << dev.permission_bit)))
    why.push_back(absl::StrCat("permission ", BitName(dev.permission_bit), " missing"));
  if ((dev.flags & abi::kNeedsDebugMode) && !p.debug_mode) why.push_back("needs debug_mode");
  return absl::StrJoin(why, "; ");
}

// What the guest gets from an allowed ioctl before any backend runs, when that is not the ioctl
// itself: the permission bits and modes the sentry applies (proxy/enforce.cc,
// proxy/nvdrv_service.cc) and Switchbrew's fixed answers. "" when it runs.
std::string Answer(const Policy& p, const abi::DeviceDesc& dev, const abi::IoctlDesc& d) {
  auto missing = [&](std::initializer_list<int> bits) {
    std::vector<std::string> names;
    for (int b : bits) {
      if ((p.permission_mask >> b) & 1) return std::string();
      names.push_back(BitName(b));
    }
    return absl::StrCat("AccessDenied: permission ", absl::StrJoin(names, " or "), " missing");
  };
  std::string why;
  if (dev.id == abi::DeviceId::kNvmap &&
      (d.code == abi::nvmap::kExportForAruid || d.code == abi::nvmap::kRemoveExportForAruid))
    why = missing({abi::kPermExportForAruid});
  else if (dev.id == abi::DeviceId::kNvmap && d.code == abi::nvmap::kFromId) {
    // Only other processes' objects need the bits (nvmap decides; own objects always import).
    std::string m = missing({abi::kPermImportMemory, abi::kPermImportExported});
    if (!m.empty()) why = m + " for another process's objects";
  } else if (dev.id == abi::DeviceId::kNvdrv && d.code == abi::nvdrv::kSetAruidWithoutCheck)
    why = missing({abi::kPermNoCheckedAruid});
  else if (dev.id == abi::DeviceId::kNvdrv &&
           d.code == abi::nvdrv::kSetGraphicsFirmwareMemoryMarginEnabled)
    why = missing({abi::kPermGraphicsFirmwareMemoryMargin});
  else if (dev.id == abi::DeviceId::kNvhostCtrl && d.code == abi::nvhost_ctrl::kGetConfig &&
           p.production_mode)
    why = "NotSupported: production_mode";
  else if (d.flags & abi::kFixedAnswer)
    why = absl::StrCat(S(abi::NvErrorName(d.answer)), ": Switchbrew's fixed answer");
  return why.empty() ? why : absl::StrCat(" (answers ", why, ")");
}

// "0xA140 (inline-to-memory), 0xB197 (3D)", or "none".
std::string ClassesText(const std::vector<uint32_t>& classes) {
  std::vector<std::string> v;
  for (uint32_t c : classes) {
    const abi::GpuClass* g = abi::FindGpuClass(c);
    v.push_back(absl::StrFormat("0x%04X (%s)", c, g != nullptr ? S(g->name) : "?"));
  }
  return v.empty() ? "none" : absl::StrJoin(v, ", ");
}

std::string RuleText(const abi::IoctlDesc& d, const IoctlRule& r) {
  std::string s = r.verdict == Verdict::kAllow ? "allow" : "deny";
  for (size_t i = 0; i < r.array_limits.size() && i < d.arrays.size(); ++i)
    if (r.array_limits[i] != d.arrays[i].max_count)
      absl::StrAppend(&s, ", ", S(d.arrays[i].name), " <= ", r.array_limits[i]);
  for (const FieldRule& f : r.fields) {
    if (f.max) absl::StrAppend(&s, ", ", S(f.field->name), " <= ", Hex(*f.max));
    if (f.bits) absl::StrAppend(&s, ", ", S(f.field->name), " within bits ", Hex(*f.bits));
    if (!f.one_of.empty()) {
      std::vector<std::string> v;
      for (uint64_t x : f.one_of) v.push_back(Hex(x));
      absl::StrAppend(&s, ", ", S(f.field->name), " in {", absl::StrJoin(v, ", "), "}");
    }
  }
  return s;
}

}  // namespace

std::string RenderToml(const Policy& p, bool comments) {
  std::string o;
  auto note = [&](std::string_view text) {
    if (comments) absl::StrAppend(&o, "# ", S(text), "\n");
  };
  note("nvsentry policy (docs/policy.md). Check it with: nvsentry policy check FILE");
  absl::StrAppend(&o, "[guest]\n");
  note("nvdrv, nvdrv:a (applets), nvdrv:s (sysmodules), nvdrv:t (factory)");
  absl::StrAppend(&o, "service = \"", p.service, "\"\n");
  absl::StrAppend(&o, "firmware = \"", abi::FirmwareString(p.firmware), "\"\n");
  if (p.mask_explicit)
    absl::StrAppend(&o, "permission_mask = ", Hex(p.permission_mask), "\n");
  else if (comments)
    absl::StrAppend(&o, "# permission_mask = ", Hex(p.permission_mask),
                    "  # the service's own mask\n");
  absl::StrAppend(&o, "aruid = ", p.aruid, "\n");
  absl::StrAppend(&o, "debug_mode = ", p.debug_mode ? "true" : "false", "\n");
  absl::StrAppend(&o, "production_mode = ", p.production_mode ? "true" : "false", "\n\n");
  absl::StrAppend(&o, "[violation]\n");
  note("errno (the call fails with AccessDenied), kill (the guest), audit (log and allow)");
  absl::StrAppend(&o, "action = \"", ActionName(p.action), "\"\n\n");
  absl::StrAppend(&o, "[budgets]\n");
  const Budgets& b = p.budgets;
  absl::StrAppend(&o, "transfer_memory = ", Hex(b.transfer_memory), "\n", "open_fds = ", b.open_fds,
                  "\n", "nvmap_objects = ", b.nvmap_objects, "\n", "channels = ", b.channels, "\n",
                  "address_spaces = ", b.address_spaces, "\n",
                  "pinned_bytes = ", Hex(b.pinned_bytes), "\n", "mappings = ", b.mappings, "\n",
                  "parked_waits = ", b.parked_waits, "\n", "queued_bytes = ", Hex(b.queued_bytes),
                  "\n", "twin_bytes = ", Hex(b.twin_bytes), "\n");
  if (p.channel_classes) {
    absl::StrAppend(&o, "\n[channels]\n");
    note("the engine classes the GPU channels' pushbuffers may bind with SET_OBJECT");
    std::vector<std::string> v;
    for (uint32_t c : *p.channel_classes) v.push_back(Hex(c));
    absl::StrAppend(&o, "classes = [", absl::StrJoin(v, ", "), "]\n");
  } else if (comments) {
    absl::StrAppend(&o, "\n# [channels] classes not set: the GPU channels may bind ",
                    ClassesText(BindableClasses(p)),
                    " (from NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX's rule)\n");
  }
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    auto it = p.devices.find(dev.id);
    if (it == p.devices.end()) continue;
    absl::StrAppend(&o, "\n[devices.\"", S(dev.path), "\"]\n");
    if (comments && dev.permission_bit >= 0)
      absl::StrAppend(&o, "# needs permission ", BitName(dev.permission_bit),
                      (p.permission_mask >> dev.permission_bit) & 1 ? ", which the mask grants"
                                                                    : ", which the mask lacks",
                      "\n");
    // "simulated" is the default; the parser refuses it, as a contradiction, for a node the
    // policy can never open, so it is only written where it means something.
    const bool opens = dev.fw.Contains(p.firmware) &&
                       (dev.permission_bit < 0 || (p.permission_mask >> dev.permission_bit) & 1);
    if (it->second.backend == Backend::kDeny)
      absl::StrAppend(&o, "backend = \"deny\"\n");
    else if (it->second.backend == Backend::kHost)
      absl::StrAppend(&o, "backend = \"host\"\n");
    else if (opens)
      absl::StrAppend(&o, "backend = \"simulated\"\n");
    absl::StrAppend(&o, "ioctls = \"", it->second.ioctls == Verdict::kDeny ? "deny" : "allow",
                    "\"\n");
  }
  for (const auto& [name, d, rule] : RulesByName(p)) {
    absl::StrAppend(&o, "\n[ioctls.", name, "]\n");
    absl::StrAppend(&o, "allow = ", rule->verdict == Verdict::kAllow ? "true" : "false", "\n");
    std::vector<std::string> arrays;
    for (size_t i = 0; i < rule->array_limits.size() && i < d->arrays.size(); ++i)
      if (rule->array_limits[i] != d->arrays[i].max_count)
        arrays.push_back(absl::StrCat(S(d->arrays[i].name), " = ", rule->array_limits[i]));
    if (!arrays.empty()) absl::StrAppend(&o, "arrays = { ", absl::StrJoin(arrays, ", "), " }\n");
    for (const FieldRule& f : rule->fields) {
      std::vector<std::string> parts;
      if (f.max) parts.push_back(absl::StrCat("max = ", Hex(*f.max)));
      if (f.bits) parts.push_back(absl::StrCat("bits = ", Hex(*f.bits)));
      if (!f.one_of.empty()) {
        std::vector<std::string> v;
        for (uint64_t x : f.one_of) v.push_back(Hex(x));
        parts.push_back(absl::StrCat("one_of = [", absl::StrJoin(v, ", "), "]"));
      }
      absl::StrAppend(&o, "fields.", S(f.field->name), " = { ", absl::StrJoin(parts, ", "), " }\n");
    }
  }
  return o;
}

std::string InitPolicy(std::string_view service, abi::Firmware fw) {
  Policy p = DefaultPolicy();
  p.service = S(service);
  p.firmware = fw;
  p.permission_mask = abi::ServiceMask(service, fw).value_or(0);
  // Every device listed: simulated where the mask grants it, deny where it does not.
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    if (!dev.fw.Contains(fw)) continue;
    bool granted = dev.permission_bit < 0 || (p.permission_mask & (1u << dev.permission_bit));
    p.devices[dev.id] = DeviceRule{granted ? Backend::kSimulated : Backend::kDeny, Verdict::kAllow};
  }
  return RenderToml(p, true);
}

std::string ShowPolicy(const Policy& p, bool effective) {
  std::string o =
      absl::StrCat("policy ", p.source, "\nservice ", p.service, " on firmware ",
                   abi::FirmwareString(p.firmware), ", permission mask ", Hex(p.permission_mask),
                   p.mask_explicit ? " (explicit)" : " (the service's)", "\n");
  for (const abi::PermissionBitDesc& b : abi::PermissionBits())
    absl::StrAppend(
        &o, absl::StrFormat("  bit %2d %-28s %-7s %s\n", b.bit, S(b.name),
                            (p.permission_mask >> b.bit) & 1 ? "granted" : "-", S(b.grants)));
  absl::StrAppend(&o, "aruid ", p.aruid, ", debug_mode ", p.debug_mode ? "on" : "off",
                  ", production_mode ", p.production_mode ? "on" : "off",
                  ", violations: ", ActionName(p.action), "\n");
  const Budgets& b = p.budgets;
  absl::StrAppend(&o, "budgets: transfer_memory ", Hex(b.transfer_memory), ", open_fds ",
                  b.open_fds, ", nvmap_objects ", b.nvmap_objects, ", channels ", b.channels,
                  ", address_spaces ", b.address_spaces, ", pinned_bytes ", Hex(b.pinned_bytes),
                  ", mappings ", b.mappings, ", parked_waits ", b.parked_waits, ", queued_bytes ",
                  Hex(b.queued_bytes), ", twin_bytes ", Hex(b.twin_bytes), "\n");
  absl::StrAppend(&o, "channels may bind: ", ClassesText(BindableClasses(p)),
                  p.channel_classes ? " ([channels] classes)"
                                    : " (from NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX's rule)",
                  "\ndevices:\n");
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    std::string why = WhyNot(p, dev);
    std::string what = "refused: " + why;
    if (why.empty())
      what = p.Device(dev.id).ioctls == Verdict::kDeny ? "opens (simulated), unnamed ioctls denied"
                                                       : "opens (simulated)";
    absl::StrAppend(&o, absl::StrFormat("  %-22s %s\n", S(dev.path), what));
    if (!effective || !why.empty()) continue;
    for (const abi::IoctlDesc& d : dev.ioctls) {
      if (!d.fw.Contains(p.firmware)) continue;
      const IoctlRule rule = p.Ioctl(dev, d);
      absl::StrAppend(&o,
                      absl::StrFormat("    %-50s %s%s\n", S(d.name), RuleText(d, rule),
                                      rule.verdict == Verdict::kAllow ? Answer(p, dev, d) : ""));
    }
  }
  return o;
}

std::string DiffPolicies(const Policy& a, const Policy& b) {
  std::string o;
  auto both = [&](const std::string& what, const std::string& va, const std::string& vb) {
    if (va != vb) absl::StrAppend(&o, what, ": ", va, " | ", vb, "\n");
  };
  both("service", a.service, b.service);
  both("firmware", abi::FirmwareString(a.firmware), abi::FirmwareString(b.firmware));
  for (const abi::PermissionBitDesc& bit : abi::PermissionBits()) {
    bool ga = (a.permission_mask >> bit.bit) & 1, gb = (b.permission_mask >> bit.bit) & 1;
    both(absl::StrCat("permission bit ", bit.bit, " ", S(bit.name)), ga ? "granted" : "-",
         gb ? "granted" : "-");
  }
  both("debug_mode", a.debug_mode ? "on" : "off", b.debug_mode ? "on" : "off");
  both("production_mode", a.production_mode ? "on" : "off", b.production_mode ? "on" : "off");
  both("violations", ActionName(a.action), ActionName(b.action));
  both("budgets.transfer_memory", Hex(a.budgets.transfer_memory), Hex(b.budgets.transfer_memory));
  both("budgets.open_fds", absl::StrCat(a.budgets.open_fds), absl::StrCat(b.budgets.open_fds));
  both("budgets.nvmap_objects", absl::StrCat(a.budgets.nvmap_objects),
       absl::StrCat(b.budgets.nvmap_objects));
  both("budgets.channels", absl::StrCat(a.budgets.channels), absl::StrCat(b.budgets.channels));
  both("budgets.address_spaces", absl::StrCat(a.budgets.address_spaces),
       absl::StrCat(b.budgets.address_spaces));
  both("budgets.pinned_bytes", Hex(a.budgets.pinned_bytes), Hex(b.budgets.pinned_bytes));
  both("budgets.mappings", absl::StrCat(a.budgets.mappings), absl::StrCat(b.budgets.mappings));
  both("budgets.parked_waits", absl::StrCat(a.budgets.parked_waits),
       absl::StrCat(b.budgets.parked_waits));
  both("budgets.queued_bytes", Hex(a.budgets.queued_bytes), Hex(b.budgets.queued_bytes));
  both("budgets.twin_bytes", Hex(a.budgets.twin_bytes), Hex(b.budgets.twin_bytes));
  both("channel classes", ClassesText(BindableClasses(a)), ClassesText(BindableClasses(b)));
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    std::string wa = WhyNot(a, dev), wb = WhyNot(b, dev);
    both(S(dev.path), wa.empty() ? "opens" : "refused: " + wa,
         wb.empty() ? "opens" : "refused: " + wb);
    if (!wa.empty() || !wb.empty()) continue;
    // Per catalogue entry: the one each policy's firmware uses (they may differ).
    for (const abi::IoctlDesc& d : dev.ioctls) {
      if (!d.fw.Contains(a.firmware) && !d.fw.Contains(b.firmware)) continue;
      auto text = [&](const Policy& p) {
        return d.fw.Contains(p.firmware) ? RuleText(d, p.Ioctl(dev, d))
                                         : absl::StrCat("not on ", abi::FirmwareString(p.firmware));
      };
      std::string ta = text(a), tb = text(b);
      if (ta != tb)
        absl::StrAppend(&o, S(dev.path), " ", S(d.name), " ", Hex(d.code), ": ", ta, " | ", tb,
                        "\n");
    }
  }
  return o;
}

}  // namespace nvsentry::policy
