#include "hostshim/host/channel_xlate.h"

#include <bit>

namespace nvsentry::hostshim::host {

namespace ch = abi::channel;
namespace l4t = abi::l4t::nvgpu_channel;
using abi::NvError;

NvError SubmitFlagsToHost(uint32_t g, uint32_t* h) {
  if (g & kSubmitIncrementByValue) return NvError::kNotSupported;
  *h = ch::kFenceGet | (g & (ch::kFenceWait | ch::kHwFormat | ch::kSuppressWfi));
  return NvError::kSuccess;
}

NvError AllocGpfifoToHost(uint32_t n, bool ex, l4t::AllocGpfifoEx* h) {
  constexpr uint32_t kMaxRingEntries = 1u << 16;
  if (n == 0 || n > kMaxRingEntries) return NvError::kBadParameter;
  if (!std::has_single_bit(n)) {
    if (ex) return NvError::kBadParameter;
    n = std::bit_ceil(n);
  }
  *h = {};
  h->num_entries = n;
  return NvError::kSuccess;
}

HostChannelError ChannelErrorOf(bool timed_out, std::optional<sim::NotifierRecord> record) {
  if (record && record->status == sim::kNotifierStatusError && record->info32 != 0)
    return {true, record->info32};
  if (!timed_out) return {};
  return {true, sim::kNotifierIdleTimeout};
}

ch::ErrorNotification ErrorNotificationOf(const HostChannelError& e, uint64_t cpu_ticks) {
  ch::ErrorNotification n{};
  if (!e.failed) return n;
  n.timestamp = cpu_ticks;
  n.info32 = e.info32;
  n.status = sim::kNotifierStatusError;
  return n;
}

ch::ErrorInfo ErrorInfoOf(const HostChannelError& e) {
  ch::ErrorInfo i{};
  if (!e.failed) return i;
  sim::ChannelErrorKind kind = sim::ChannelErrorKind::kTimeout;
  switch (e.info32) {
    case sim::kNotifierMmuFault: kind = sim::ChannelErrorKind::kMmu; break;
    case sim::kNotifierGrException: kind = sim::ChannelErrorKind::kGr; break;
    case sim::kNotifierPbdmaError: kind = sim::ChannelErrorKind::kPbdma; break;
    default: break;
  }
  // Word 0 the kind, word 1 the notifier code; the fault's details stay on the host.
  i.error_info[0] = static_cast<uint32_t>(kind);
  i.error_info[1] = e.info32;
  return i;
}

}  // namespace nvsentry::hostshim::host
