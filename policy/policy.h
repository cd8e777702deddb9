// A guest's policy: what it is (service identity, firmware, permission mask, aruid, modes), which
// devices it may open and who serves them, which ioctls it may call and with what arguments, how
// much it may make the driver keep, and what a violation does. Read from a TOML file (parse.h),
// resolved against the catalogue: every name in it is a real device, ioctl, array or field.
// Immutable once loaded; one per sentry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "abi/budgets.h"
#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "absl/container/flat_hash_map.h"

namespace nvsentry::policy {

enum class Backend : uint8_t {
  kSimulated,  // the built-in simulated GPU
  kDeny,       // the node does not exist for the guest (open fails as for a missing node)
  kHost,       // forwarded to the host's own device (hostshim/host/, docs/host-passthrough.md)
};

// The devices the host backend translates: the GPU's five. They share objects (nvmap handles,
// address spaces, channels, syncpoints), so they are on the host together or not at all.
bool HostCapable(abi::DeviceId id);
// The devices that use the GPU's objects (nvmap surfaces, syncpoints) but that the host backend
// does not translate: the host1x channels, the display, the GPU debuggers. With the GPU on the
// host they cannot be simulated (their objects would be the host's); they do not open.
bool UsesGpuObjects(abi::DeviceId id);

enum class Verdict : uint8_t { kAllow, kDeny };

// What happens when the guest does something the policy does not allow.
enum class Action : uint8_t {
  kErrno,  // the call fails (AccessDenied: EACCES, or the NvError through /dev/nvdrv)
  kKill,   // the whole guest is killed (SIGKILL); nvsentry exits 137
  kAudit,  // logged (and traced), then allowed
};

// A constraint on one scalar field of an ioctl's fixed part, by catalogue field name.
struct FieldRule {
  const abi::Field* field;       // in the ioctl's catalogue layout
  std::optional<uint64_t> max;   // value <= max
  std::optional<uint64_t> bits;  // value & ~bits == 0 (e.g. heap masks)
  std::vector<uint64_t> one_of;  // value is one of these (e.g. ALLOC_OBJ_CTX classes); empty: any
};

struct IoctlRule {
  Verdict verdict = Verdict::kAllow;
  // Per entry of the ioctl's `arrays`: the largest count allowed (never above the catalogue's).
  std::vector<uint32_t> array_limits;
  std::vector<FieldRule> fields;
};

struct DeviceRule {
  Backend backend = Backend::kSimulated;
  Verdict ioctls = Verdict::kAllow;  // for ioctls of the device that no rule names
};

// What the guest may make the driver keep (abi/budgets.h).
using Budgets = abi::Budgets;

struct Policy {
  std::string source;  // the file it came from, "(default)" for the built-in one
  std::string service = "nvdrv";
  abi::Firmware firmware = abi::kLatestFirmware;
  uint32_t permission_mask = 0;  // the service's mask on `firmware`, or the explicit one
  bool mask_explicit = false;
  uint64_t aruid = 0;
  bool debug_mode = false;
  bool production_mode = false;  // GET_CONFIG is unavailable
  Action action = Action::kErrno;
  Budgets budgets;
  absl::flat_hash_map<abi::DeviceId, DeviceRule> devices;  // devices not listed: DeviceRule{}
  absl::flat_hash_map<const abi::IoctlDesc*, IoctlRule>
      ioctls;  // ioctls not listed: the device's default
  // What an ioctl that follows another (abi::IoctlDesc::follows: SUBMIT_GPFIFO_RETRY follows
  // SUBMIT_GPFIFO) and that no rule names takes from the rule of the one it follows: its verdict
  // (the stricter of it and the device's default applies) and its limits on the arrays and input
  // fields the two share by name. So the other number cannot do what the rule forbids. Made by
  // ResolveFollowers.
  absl::flat_hash_map<const abi::IoctlDesc*, IoctlRule> followed;
  // [channels] classes: the engine classes a GPU channel's command stream may bind with
  // SET_OBJECT, sorted. nullopt: not said, derived from the ALLOC_OBJ_CTX rule (BindableClasses).
  std::optional<std::vector<uint32_t>> channel_classes;

  // A device's rule; with the GPU on the host, the devices that use its objects are "deny".
  const DeviceRule& Device(abi::DeviceId id) const;
  // Whether the GPU's devices are forwarded to the host (all five say "host").
  bool GpuOnHost() const;
  // The rule for `desc` on `dev`: its own, the one it follows (`followed`), or allow/deny from the
  // device's default.
  IoctlRule Ioctl(const abi::DeviceDesc& dev, const abi::IoctlDesc& desc) const;
  // The rule `desc` takes from the one it follows, or null (the verdict there is the followed
  // rule's alone: the device's default still applies, Ioctl() and proxy::FindRule combine them).
  const IoctlRule* Followed(const abi::IoctlDesc& desc) const {
    auto it = followed.find(&desc);
    return it == followed.end() ? nullptr : &it->second;
  }
};

// Fills `p.followed` from `p.ioctls` (again: what was there goes).
void ResolveFollowers(Policy& p);

// nvdrv, latest firmware, its mask, every device simulated, every ioctl allowed, the budgets above.
Policy DefaultPolicy();

// Whether the policy lets a GPU channel allocate an object context of class `cls`: the verdict of
// NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX on /dev/nvhost-gpu for the policy's firmware and its class_num
// rule (max, bits, one_of).
bool AllowsObjectContext(const Policy& p, uint32_t cls);
// Whether it lets a channel have a graphics object context (any graphics-engine class).
bool AllowsGraphicsContext(const Policy& p);
// The classes the guest's GPU channels may bind with SET_OBJECT, sorted: `channel_classes` when the
// policy says them; otherwise the classes of the engines ALLOC_OBJ_CTX lets it create a context
// for: every graphics-engine class (3D, compute, 2D, inline-to-memory, which real clients bind
// under the one 3D context they allocate) when any of them is allowed, the DMA copy class when it
// is. So a policy that denies ALLOC_OBJ_CTX, or limits class_num to 0xB197, does not let a
// pushbuffer bind 0xB0B5 unless [channels] says so.
std::vector<uint32_t> BindableClasses(const Policy& p);

}  // namespace nvsentry::policy
