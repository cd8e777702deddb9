// Enforcing the guest's policy on one ioctl (the copy engine calls these) and what a violation
// does. Two kinds of refusal:
//  - Switchbrew's own answers, which follow from the guest's identity (permission mask, production
//    mode) and are the same whatever the policy's action: NVMAP_IOC_EXPORT_FOR_ARUID and
//    REMOVE_EXPORT_FOR_ARUID need bit 14 (AccessDenied), NVHOST_IOCTL_CTRL_GET_CONFIG is
//    NotSupported in production mode. (NVMAP_IOC_FROM_ID's bits 9 and 12 concern other
//    processes' objects: nvmap decides them, hostshim/sim/memory/nvmap.h);
//  - violations of the policy's rules (an ioctl denied, an array count above the policy's limit,
//    a field outside its rule), which do what the policy's action says: errno (AccessDenied),
//    audit (logged, traced, then allowed) or kill (the whole guest).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "proxy/guest_config.h"

namespace nvsentry::proxy {

// The policy's verdict for `desc` on `dev` and its rule, if the policy names the ioctl.
struct RuleRef {
  policy::Verdict verdict;
  const policy::IoctlRule* rule;  // null: the device's default, no limits
};
RuleRef FindRule(const GuestConfig& c, const abi::DeviceDesc& dev, const abi::IoctlDesc& desc);

// Switchbrew's answer that the guest's identity gives this ioctl before anything else happens
// (Success: none).
abi::NvError IdentityAnswer(const GuestConfig& c, const abi::DeviceDesc& dev,
                            const abi::IoctlDesc& desc);

// The limits to lay the call's arrays out with: the catalogue's, except that an Ioctl3 output
// array that takes "as many as fit" is filled up to the policy's limit (a roomy buffer is no
// violation). Empty when the policy sets no limits for `desc`.
std::vector<uint32_t> LayoutLimits(const GuestConfig& c, const abi::IoctlDesc& desc);

// The first rule of `rule` (array limits, then field rules) that the copied call breaks, as a
// short name ("array entries", "field class one_of") and a sentence; nullopt when none is.
struct Breach {
  std::string rule;
  std::string detail;
};
std::optional<Breach> CheckArguments(const GuestConfig& c, const abi::IoctlDesc& desc,
                                     const policy::IoctlRule* rule, std::span<const uint8_t> fixed,
                                     const abi::ArrayLayout& layout);

// What the sentry does about a violation.
enum class ViolationOutcome {
  kProceed,  // audit: logged, the call goes on as if allowed
  kRefuse,   // errno: the call fails with AccessDenied
  kKilled,   // kill: the guest is being killed; the call is not answered
};
// Logs the violation (warn, once per ioctl and rule; debug after), notes it in the trace, applies
// the policy's action. `desc` may be null for rules that are not an ioctl's.
ViolationOutcome Violation(const GuestConfig& c, pid_t tid, const abi::DeviceDesc& dev,
                           const abi::IoctlDesc* desc, std::string_view rule,
                           std::string_view detail);
// The same for what a GPU channel's command stream asked for (`what`: the method, e.g.
// "SET_OBJECT"), found on an engine thread: no guest thread to name (tid 0 in the trace), and a
// refusal stops the channel with an error the guest reads instead of failing a call.
ViolationOutcome CommandStreamViolation(const GuestConfig& c, std::string_view what,
                                        std::string_view rule, std::string_view detail);

// A scalar field's value in the copied fixed part, zero-extended (sign-extended for signed
// types, then as 64-bit two's complement); nullopt for fields that are not one scalar or do not
// fit in `fixed`.
std::optional<uint64_t> FieldValue(const abi::Field& f, std::span<const uint8_t> fixed);

std::string_view ActionName(policy::Action a);

}  // namespace nvsentry::proxy
