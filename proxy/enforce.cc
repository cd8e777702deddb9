#include "proxy/enforce.h"

#include <algorithm>
#include <cstring>

#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvmap.h"
#include "abi/services.h"
#include "hostshim/rate_limited_log.h"
#include "proxy/trace.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {

std::string_view ActionName(policy::Action a) {
  switch (a) {
    case policy::Action::kErrno: return "errno";
    case policy::Action::kKill: return "kill";
    case policy::Action::kAudit: return "audit";
  }
  return "?";
}

RuleRef FindRule(const GuestConfig& c, const abi::DeviceDesc& dev, const abi::IoctlDesc& desc) {
  const policy::Policy& p = c.policy.rules();
  if (auto it = p.ioctls.find(&desc); it != p.ioctls.end())
    return {it->second.verdict, &it->second};
  const policy::Verdict device = p.Device(dev.id).ioctls;
  // One that follows a ruled ioctl: the stricter verdict, and that rule's limits.
  if (const policy::IoctlRule* f = p.Followed(desc)) {
    if (f->verdict == policy::Verdict::kDeny || device == policy::Verdict::kDeny)
      return {policy::Verdict::kDeny, nullptr};
    return {policy::Verdict::kAllow, f};
  }
  return {device, nullptr};
}

abi::NvError IdentityAnswer(const GuestConfig& c, const abi::DeviceDesc& dev,
                            const abi::IoctlDesc& desc) {
  if (dev.id == abi::DeviceId::kNvmap) {
    switch (desc.code) {
      case abi::nvmap::kExportForAruid:
      case abi::nvmap::kRemoveExportForAruid:
        return c.policy.permissions().MayExportForAruid() ? abi::NvError::kSuccess
                                                          : abi::NvError::kAccessDenied;
      default: break;
    }
    // NVMAP_IOC_FROM_ID is not refused here: bits 9 and 12 are about other processes' objects,
    // and only nvmap knows whose an object is (hostshim/sim/memory/nvmap.h decides, for every
    // service).
  }
  if (dev.id == abi::DeviceId::kNvhostCtrl && desc.code == abi::nvhost_ctrl::kGetConfig &&
      c.policy.rules().production_mode)
    return abi::NvError::kNotSupported;
  return abi::NvError::kSuccess;
}

std::vector<uint32_t> LayoutLimits(const GuestConfig& c, const abi::IoctlDesc& desc) {
  const std::vector<uint32_t>* lowered = c.policy.ArrayLimits(desc);
  if (lowered == nullptr) return {};
  std::vector<uint32_t> limits(desc.arrays.size(), UINT32_MAX);
  for (size_t i = 0; i < desc.arrays.size() && i < lowered->size(); ++i) {
    const abi::ArrayDesc& a = desc.arrays[i];
    if (a.buffer == abi::Buffer::kOut2 && a.count_from == abi::CountFrom::kRest)
      limits[i] = (*lowered)[i];
  }
  return limits;
}

std::optional<uint64_t> FieldValue(const abi::Field& f, std::span<const uint8_t> fixed) {
  if (f.count != 1 || f.type == abi::FieldType::kStruct || f.type == abi::FieldType::kChar)
    return std::nullopt;
  const uint32_t n = abi::FieldTypeSize(f.type);
  if (static_cast<uint64_t>(f.offset) + n > fixed.size()) return std::nullopt;
  uint64_t v = 0;
  std::memcpy(&v, fixed.data() + f.offset, n);  // little-endian
  switch (f.type) {
    case abi::FieldType::kS8:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(v)));
    case abi::FieldType::kS16:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v)));
    case abi::FieldType::kS32:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
    default: return v;
  }
}

std::optional<Breach> CheckArguments(const GuestConfig& c, const abi::IoctlDesc& desc,
                                     const policy::IoctlRule* rule, std::span<const uint8_t> fixed,
                                     const abi::ArrayLayout& layout) {
  if (const std::vector<uint32_t>* lowered = c.policy.ArrayLimits(desc)) {
    const std::vector<uint32_t>& limits = *lowered;
    for (size_t i = 0; i < desc.arrays.size() && i < limits.size() && i < layout.slices.size();
         ++i) {
      if (layout.slices[i].count > limits[i])
        return Breach{fmt::format("array {}", desc.arrays[i].name),
                      fmt::format("{} count {} above the policy's limit {}", desc.arrays[i].name,
                                  layout.slices[i].count, limits[i])};
    }
  }
  if (rule == nullptr) return std::nullopt;
  for (const policy::FieldRule& fr : rule->fields) {
    if (fr.field == nullptr) continue;
    std::optional<uint64_t> v = FieldValue(*fr.field, fixed);
    if (!v) continue;
    const std::string_view name = fr.field->name;
    if (fr.max && *v > *fr.max)
      return Breach{fmt::format("field {} max", name),
                    fmt::format("{} = {} above the policy's max {}", name, *v, *fr.max)};
    if (fr.bits && (*v & ~*fr.bits) != 0)
      return Breach{fmt::format("field {} bits", name),
                    fmt::format("{} = 0x{:X} has bits outside 0x{:X}", name, *v, *fr.bits)};
    if (!fr.one_of.empty() && std::find(fr.one_of.begin(), fr.one_of.end(), *v) == fr.one_of.end())
      return Breach{fmt::format("field {} one_of", name),
                    fmt::format("{} = 0x{:X} is not one the policy allows", name, *v)};
  }
  return std::nullopt;
}

namespace {

ViolationOutcome Act(const GuestConfig& c, pid_t tid, const abi::DeviceDesc& dev,
                     std::string_view name, std::string_view rule, std::string_view detail,
                     std::string_view refusal) {
  policy::Action action = c.policy.rules().action;
  if (action == policy::Action::kKill && !c.services.kill_guest) action = policy::Action::kErrno;
  const std::string_view what = action == policy::Action::kAudit  ? "allowed (audit)"
                                : action == policy::Action::kKill ? "killing the guest"
                                                                  : refusal;
  const bool first = c.services.violations->First(fmt::format("{} {} {}", dev.path, name, rule));
  const std::string text =
      fmt::format("policy violation: {} {}: {} [rule: {}]: {}", dev.path, name, detail, rule, what);
  if (first || action == policy::Action::kKill)
    NVS_LOG_LIMITED(spdlog::level::warn, "{}", text);
  else
    NVS_LOG_LIMITED(spdlog::level::debug, "{}", text);
  c.services.observers->Violated({tid, dev, name, rule, text});
  switch (action) {
    case policy::Action::kAudit: return ViolationOutcome::kProceed;
    case policy::Action::kKill: c.services.kill_guest(); return ViolationOutcome::kKilled;
    case policy::Action::kErrno: break;
  }
  return ViolationOutcome::kRefuse;
}

}  // namespace

ViolationOutcome Violation(const GuestConfig& c, pid_t tid, const abi::DeviceDesc& dev,
                           const abi::IoctlDesc* desc, std::string_view rule,
                           std::string_view detail) {
  const std::string_view name = desc != nullptr ? desc->name : std::string_view("open");
  return Act(c, tid, dev, name, rule, detail, "refused with AccessDenied");
}

ViolationOutcome CommandStreamViolation(const GuestConfig& c, std::string_view what,
                                        std::string_view rule, std::string_view detail) {
  return Act(c, 0, abi::Device(abi::DeviceId::kNvhostGpu), what, rule, detail,
             "refused: the channel stops with an error");
}

}  // namespace nvsentry::proxy
