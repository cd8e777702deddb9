// What a guest's policy says about its GPU command streams: whatever a pushbuffer can do obeys
// the same policy as the ioctl that would do it (docs/security.md, "Command stream"). One per
// GPU, made from the guest's policy (sentry/core/sentry.cc) and shared by every channel; it
// outlives them. The channels' command processors consult it on their engine threads, so its
// callbacks must be thread-safe and must not block.
//
// The syncpoint rule (a stream increments only the guest's own syncpoints) is not here: it is
// not the policy's to relax (Syncpoints::IncrementFromCommandStream).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "abi/gpu_classes.h"

namespace nvsentry::hostshim::sim {

struct StreamPolicy {
  // The classes SET_OBJECT may bind: the policy's [channels] classes, resolved
  // (policy::BindableClasses). Default: every GM20B class.
  std::vector<uint32_t> classes = AllClasses();
  // A bind `classes` refuses, described by `detail`. Returns true when the policy's action lets it
  // go on (audit: logged, then bound); false stops the channel with the error the guest reads
  // (errno; kill, after killing the guest). Null: refused.
  std::function<bool(uint32_t cls, std::string_view detail)> violation;
  // Every class a channel bound, once per channel and class (--learn). Null: nobody asks.
  std::function<void(uint32_t cls)> bound;

  bool Allows(uint32_t cls) const {
    return std::find(classes.begin(), classes.end(), cls) != classes.end();
  }
  static std::vector<uint32_t> AllClasses() {
    std::vector<uint32_t> v;
    for (const abi::GpuClass& c : abi::kGpuClasses) v.push_back(c.number);
    return v;
  }
};

}  // namespace nvsentry::hostshim::sim
