// How each guest ioctl of the five GPU devices (/dev/nvhost-ctrl, -ctrl-gpu, -as-gpu, -gpu and
// /dev/nvmap) maps onto the L4T r32.7 host ABI, as data: the host call(s) a translation makes, or
// that the sentry answers it itself, or NotSupported; and what differs. docs/host-abi.md says the
// same in prose. The guest's channel table is shared by every channel node; it is listed once,
// under /dev/nvhost-gpu, with its host1x calls pointing at the host's host1x channel nodes.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/l4t/nodes.h"

namespace nvsentry::abi::l4t {

// What differs between a guest call and its host counterpart (a bit set; 0: the very same call).
enum Diff : uint8_t {
  kSameCall = 0,
  kCode = 1u << 0,       // another code (number, magic, direction or size bits)
  kLayout = 1u << 1,     // other members, or the same ones at other offsets
  kPointer = 1u << 2,    // data the guest carries inline (or in Ioctl2/3) goes by user pointer
  kHandle = 1u << 3,     // names nvmap memory: guest ids vs host handles (dma-buf fds on r32.7)
  kFd = 1u << 4,         // names an fd: the guest's becomes the sentry's own host fd
  kSemantics = 1u << 5,  // behaves otherwise (the note says how)
};

enum class HostPlan : uint8_t {
  kForward,       // the translation makes `host` calls
  kSentry,        // the sentry answers from its own state (`host` lists calls it relies on)
  kNotSupported,  // no counterpart: the host backend answers NotSupported with a log line
};

struct HostCall {
  L4tNode node;
  uint32_t code;
};

struct Correspondence {
  DeviceId guest_device;
  uint32_t guest_code;  // the catalogue's code (size bits 0 for variable-length ioctls)
  HostPlan plan;
  std::array<HostCall, 3> host_calls = {};  // unused slots have code 0
  uint8_t diff = kSameCall;
  std::string_view note = {};

  std::span<const HostCall> host() const;
};

// The guest devices the table covers.
std::span<const DeviceId> TranslatedDevices();
std::span<const Correspondence> Correspondences();
// The row for a catalogue ioctl of `device`, or nullptr.
const Correspondence* FindCorrespondence(DeviceId device, uint32_t guest_code);

}  // namespace nvsentry::abi::l4t
