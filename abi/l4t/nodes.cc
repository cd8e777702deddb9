#include "abi/l4t/nodes.h"

#include <array>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "abi/l4t/nvhost_channel.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "abi/l4t/nvmap.h"

namespace nvsentry::abi::l4t {
namespace {

constexpr std::string_view kNvgpuH = "kernel/nvgpu include/uapi/linux/nvgpu.h";
constexpr std::string_view kNvhostH = "kernel/nvidia include/uapi/linux/nvhost_ioctl.h";
constexpr std::string_view kNvmapH = "kernel/nvidia include/uapi/linux/nvmap.h";

const std::array<L4tNodeDesc, 7>& Table() {
  // In L4tNode order, so that Node() can index it.
  static const std::array<L4tNodeDesc, 7> kNodes = {{
      {L4tNode::kNvhostCtrl, "/dev/nvhost-ctrl", kNvhostH, nvhost_ctrl::Ioctls()},
      {L4tNode::kNvhostCtrlGpu, "/dev/nvhost-ctrl-gpu", kNvgpuH, nvgpu_ctrl::Ioctls()},
      {L4tNode::kNvhostAsGpu, "/dev/nvhost-as-gpu", kNvgpuH, nvgpu_as::Ioctls()},
      {L4tNode::kNvhostGpu, "/dev/nvhost-gpu", kNvgpuH, nvgpu_channel::Ioctls()},
      {L4tNode::kNvmap, "/dev/nvmap", kNvmapH, nvmap::Ioctls()},
      {L4tNode::kTsg, "/dev/nvhost-tsg-gpu", kNvgpuH, nvgpu_tsg::Ioctls()},
      {L4tNode::kHost1xChannel, "", kNvhostH, nvhost_channel::Ioctls()},
  }};
  return kNodes;
}

}  // namespace

std::span<const L4tNodeDesc> L4tNodes() { return Table(); }

const L4tNodeDesc& Node(L4tNode id) { return Table()[static_cast<size_t>(id)]; }

const IoctlDesc* FindL4tIoctl(L4tNode node, uint32_t code) {
  for (const IoctlDesc& d : Node(node).ioctls)
    if (d.code == code) return &d;
  return nullptr;
}

}  // namespace nvsentry::abi::l4t
