#include "sentry/oci/seccomp_merge.h"

#include <bitset>
#include <vector>

#include "absl/strings/str_cat.h"

namespace nvsentry::oci {
namespace {

constexpr std::string_view kAllow = "SCMP_ACT_ALLOW";

// An ioctl rule on the request's magic: (request & mask) == value.
nlohmann::json IoctlRule(std::string_view action, uint64_t mask, uint64_t value) {
  nlohmann::json arg{
      {"index", 1}, {"value", mask}, {"valueTwo", value}, {"op", "SCMP_CMP_MASKED_EQ"}};
  return {{"names", {"ioctl"}}, {"action", action}, {"args", nlohmann::json::array({arg})}};
}

// The magics that are not the GPU's as aligned blocks (mask, value), largest first: a handful of
// rules where one per magic would be some 250.
std::vector<std::pair<uint64_t, uint64_t>> OtherMagicBlocks(std::span<const uint8_t> magics) {
  std::bitset<256> gpu, covered;
  for (uint8_t m : magics) gpu.set(m);
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  for (unsigned size = 256; size >= 1; size /= 2) {
    for (unsigned b = 0; b < 256; b += size) {
      bool free = !covered[b];
      for (unsigned i = b; free && i < b + size; ++i) free = !gpu[i];
      if (!free) continue;
      for (unsigned i = b; i < b + size; ++i) covered.set(i);
      blocks.emplace_back(0xFF00 & ~(uint64_t{size - 1} << 8), uint64_t{b} << 8);
    }
  }
  return blocks;
}

bool NamesIoctl(const nlohmann::json& rule) {
  if (!rule.contains("names") || !rule["names"].is_array()) return false;
  for (const nlohmann::json& n : rule["names"])
    if (n == "ioctl") return true;
  return false;
}

bool Unconditional(const nlohmann::json& rule) {
  return !rule.contains("args") || rule["args"].is_null() || rule["args"].empty();
}

// The index of the one unconditional SCMP_ACT_ALLOW rule naming ioctl; -1 when no rule names it
// and the default allows it; an error when the profile restricts ioctl in any way.
absl::StatusOr<int> WhereIoctlIsAllowed(const nlohmann::json& profile) {
  int found = -1;
  const nlohmann::json& rules = profile.value("syscalls", nlohmann::json::array());
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!NamesIoctl(rules[i])) continue;
    if (rules[i].value("action", "") != kAllow || !Unconditional(rules[i]) || found >= 0)
      return absl::FailedPreconditionError(
          "the container's seccomp profile restricts ioctl; nvsentry-oci adds the GPU's ioctls "
          "only to a profile that allows every ioctl (it never weakens one)");
    found = static_cast<int>(i);
  }
  if (found < 0 && profile.value("defaultAction", "") != kAllow)
    return absl::FailedPreconditionError(
        "the container's seccomp profile does not allow ioctl; nvsentry-oci never weakens it");
  return found;
}

nlohmann::json NativeArchitectures() {
#if defined(__x86_64__)
  return {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
#elif defined(__aarch64__)
  return {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"};
#else
  return nlohmann::json::array();
#endif
}

}  // namespace

absl::StatusOr<nlohmann::json> NotifyGpuIoctls(const nlohmann::json& seccomp,
                                               std::span<const uint8_t> magics,
                                               const std::string& listener_path) {
  nlohmann::json p = seccomp;
  if (p.is_null()) p = {{"defaultAction", kAllow}, {"architectures", NativeArchitectures()}};
  if (p.contains("listenerPath") && !p["listenerPath"].empty())
    return absl::FailedPreconditionError(
        absl::StrCat("the container's seccomp profile already has a listener (",
                     p["listenerPath"].dump(), "); nvsentry-oci cannot add its own"));
  absl::StatusOr<int> allowed_by = WhereIoctlIsAllowed(p);
  if (!allowed_by.ok()) return allowed_by.status();
  nlohmann::json& rules = p["syscalls"];
  if (rules.is_null()) rules = nlohmann::json::array();
  if (*allowed_by >= 0) {
    // The rule that allowed every ioctl now allows those of every other magic.
    nlohmann::json& rule = rules[*allowed_by];
    nlohmann::json names = nlohmann::json::array();
    for (const nlohmann::json& n : rule["names"])
      if (n != "ioctl") names.push_back(n);
    if (names.empty())
      rules.erase(rules.begin() + *allowed_by);
    else
      rule["names"] = names;
    for (auto [mask, value] : OtherMagicBlocks(magics))
      rules.push_back(IoctlRule(kAllow, mask, value));
  }
  for (uint8_t m : magics) rules.push_back(IoctlRule("SCMP_ACT_NOTIFY", 0xFF00, uint64_t{m} << 8));
  p["listenerPath"] = listener_path;
  p["listenerMetadata"] = "nvsentry-oci";
  return p;
}

}  // namespace nvsentry::oci
