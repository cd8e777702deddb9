#include "hostshim/host/channel_xlate.h"

#include <algorithm>
#include <bit>

#include "hostshim/sim/engines/pushbuffer.h"

namespace nvsentry::hostshim::host {

namespace ch = abi::channel;
namespace l4t = abi::l4t::nvgpu_channel;
using abi::NvError;

NvError SubmitFlagsToHost(uint32_t g, bool own_increments, uint32_t* h) {
  if ((g & kSubmitIncrementByValue) && (g & ch::kFenceWait)) return NvError::kBadParameter;
  *h = ch::kFenceGet | (g & (ch::kFenceWait | ch::kHwFormat));
  if (!own_increments) *h |= g & ch::kSuppressWfi;
  return NvError::kSuccess;
}

GuestFenceCount GuestFenceCountOf(uint32_t g, uint32_t fence_value, uint64_t stream) {
  constexpr uint32_t kFenceGetIncrements = 2;  // wait for idle, then two increments
  GuestFenceCount c;
  if (g & ch::kFenceGet) c.made = c.promised = kFenceGetIncrements;
  if (g & kSubmitIncrementByValue) c.promised += fence_value;
  c.made += static_cast<uint32_t>(stream);
  return c;
}

std::vector<ch::GpfifoEntry> CutEntries(std::span<const ch::GpfifoEntry> entries,
                                        std::span<const StreamCut> cuts) {
  constexpr uint32_t kVaHi = 0xFFu, kLength = 0x1FFFFFu << 10;
  std::vector<ch::GpfifoEntry> out;
  size_t c = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ch::GpfifoEntry& e = entries[i];
    if (c == cuts.size() || cuts[c].entry != i) {
      out.push_back(e);
      continue;
    }
    const uint64_t va = sim::pb::EntryVa(e.entry0, e.entry1);
    const uint32_t len = sim::pb::EntryLength(e.entry1);
    const auto piece = [&](uint32_t begin, uint32_t end) {
      if (end <= begin) return;
      const uint64_t at = va + uint64_t{begin} * 4;
      ch::GpfifoEntry p;
      p.entry0 = static_cast<uint32_t>(at);
      p.entry1 = (e.entry1 & ~(kVaHi | kLength)) | static_cast<uint32_t>((at >> 32) & kVaHi) |
                 ((end - begin) << 10);
      out.push_back(p);
    };
    uint32_t pos = 0;
    for (; c < cuts.size() && cuts[c].entry == i; ++c) {
      piece(pos, std::min(cuts[c].begin, len));
      pos = std::max(pos, std::min(cuts[c].end, len));
    }
    piece(pos, len);
  }
  return out;
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
