// The L4T r32.7 host's device nodes and fds whose ioctls abi/l4t describes, each with its table:
// what a host translation opens and calls, and what a fake L4T device serves.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t {

enum class L4tNode : uint8_t {
  kNvhostCtrl,     // /dev/nvhost-ctrl
  kNvhostCtrlGpu,  // /dev/nvhost-ctrl-gpu
  kNvhostAsGpu,    // /dev/nvhost-as-gpu
  kNvhostGpu,      // /dev/nvhost-gpu (an nvgpu channel)
  kNvmap,          // /dev/nvmap
  kTsg,            // /dev/nvhost-tsg-gpu, or an fd from nvhost-ctrl-gpu's OPEN_TSG
  kHost1xChannel,  // /dev/nvhost-vic, -nvdec, -nvjpg, -msenc, ... (not one of the five)
};

struct L4tNodeDesc {
  L4tNode id;
  std::string_view path;    // "" when only an ioctl makes it
  std::string_view header;  // the public header that defines its ioctls
  std::span<const IoctlDesc> ioctls;
};

std::span<const L4tNodeDesc> L4tNodes();
const L4tNodeDesc& Node(L4tNode id);
// The ioctl of `node` whose code is exactly `code`, or nullptr.
const IoctlDesc* FindL4tIoctl(L4tNode node, uint32_t code);

}  // namespace nvsentry::abi::l4t
