#include "tests/fuzz/xlate_stream.h"

#include <cstdio>

namespace nvsentry::fuzz {
namespace {

constexpr uint32_t kSetObject = 0x00 / 4, kSyncpointB = 0x74 / 4;  // host methods (dword index)
constexpr uint32_t kFirstEngineMethod = 0x100 / 4;

std::string Say(const char* what, uint32_t value) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s (0x%08X)", what, value);
  return buf;
}

std::optional<std::string> HostWrite(uint32_t method, uint32_t value, const StreamRules& rules) {
  if (method == kSetObject && rules.class_allowed && !rules.class_allowed(value & 0xFFFF))
    return Say("SET_OBJECT of a class the policy refuses reached the host", value);
  if (method == kSyncpointB) {
    const uint32_t op = value & 3, id = (value >> 8) & 0xFF;
    if (op >= 2) return Say("a SYNCPOINTB wait-base operation reached the host", value);
    if (op == 1 && !(rules.owns && rules.owns(id)))
      return Say("a SYNCPOINTB increment of a syncpoint the guest does not own reached the host",
                 value);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ForbiddenInEntry(std::span<const uint32_t> words,
                                            const StreamRules& rules) {
  size_t i = 0;
  while (i < words.size()) {
    const uint32_t w = words[i++];
    const uint32_t mode = w >> 29;
    uint32_t method, count;
    bool increment = true, once = false;
    switch (mode) {
      case 0:  // legacy incrementing (tertiary op 0); other tertiary ops carry no data
        if (((w >> 16) & 3) != 0 || w == 0) continue;
        method = (w >> 2) & 0x7FF, count = (w >> 18) & 0x7FF;
        break;
      case 2:  // legacy non-incrementing
        method = (w >> 2) & 0x7FF, count = (w >> 18) & 0x7FF, increment = false;
        break;
      case 1:
      case 3:
      case 5:
        method = w & 0xFFF, count = (w >> 16) & 0x1FFF;
        increment = mode != 3, once = mode == 5;
        break;
      case 4:  // immediate: the value is in the header
        if ((w & 0xFFF) < kFirstEngineMethod)
          if (auto bad = HostWrite(w & 0xFFF, (w >> 16) & 0x1FFF, rules)) return bad;
        continue;
      default: return std::nullopt;  // reserved or end of segment: the pusher stops here
    }
    if (count > words.size() - i)
      return Say("a command whose arguments run past its entry reached the host", w);
    for (uint32_t k = 0; k < count; ++k, ++i) {
      if (method < kFirstEngineMethod)
        if (auto bad = HostWrite(method, words[i], rules)) return bad;
      if (increment && (!once || k == 0)) ++method;
    }
  }
  return std::nullopt;
}

}  // namespace nvsentry::fuzz
