// The container's seccomp profile with the GPU's ioctls sent to the sentry: the engine's own
// profile (config.json's linux.seccomp), never weakened.
//
// The GPU's ioctls are those whose magic (bits 15:8 of the request) a catalogue device uses
// (abi::AllMagics). They get SCMP_ACT_NOTIFY, masked-equal rules on argument 1, with listenerPath
// at the sentry's socket. That is only done where the profile lets every ioctl through
// unconditionally (an SCMP_ACT_ALLOW rule naming ioctl without arguments, or a default action of
// SCMP_ACT_ALLOW with no rule naming it): such a rule is split into the allowed ioctls of every
// other magic (a few masked-equal rules covering them) and the notified ones. A profile that
// refuses or restricts ioctl is refused (the sentry would let through, natively, calls the
// profile refuses), as is one that already names a listener. No profile: one that allows all but
// notifies the GPU's ioctls, for the machine's architectures. The flags stay the engine's (runc
// refuses WAIT_KILLABLE_RECV; the sentry copes without it).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace nvsentry::oci {

// `seccomp`: the profile (null when the config has none). `magics`: the GPU's ioctl magics.
absl::StatusOr<nlohmann::json> NotifyGpuIoctls(const nlohmann::json& seccomp,
                                               std::span<const uint8_t> magics,
                                               const std::string& listener_path);

}  // namespace nvsentry::oci
