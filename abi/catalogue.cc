#include "abi/catalogue.h"

#include <algorithm>
#include <array>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/devices/nvcec_ctrl.h"
#include "abi/devices/nvdcutil.h"
#include "abi/devices/nvdisp.h"
#include "abi/devices/nvdisp_ctrl.h"
#include "abi/devices/nvdrv.h"
#include "abi/devices/nverpt_ctrl.h"
#include "abi/devices/nvhdcp_up_ctrl.h"
#include "abi/devices/nvhost_as_gpu.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/devices/nvhost_dbg_gpu.h"
#include "abi/devices/nvmap.h"
#include "abi/devices/nvsched_ctrl.h"

namespace nvsentry::abi {
namespace {

constexpr uint8_t kMagicCtrl[] = {0x00};
constexpr uint8_t kMagicNvdrv[] = {nvdrv::kMagic};
constexpr uint8_t kMagicNvmap[] = {0x01};
constexpr uint8_t kMagicDisp[] = {0x02};
constexpr uint8_t kMagicCec[] = {0x03};
constexpr uint8_t kMagicHdcp[] = {0x04};
constexpr uint8_t kMagicDcutil[] = {0x05};
constexpr uint8_t kMagicSched[] = {0x06};
constexpr uint8_t kMagicErpt[] = {0x07};
constexpr uint8_t kMagicAs[] = {0x41};
constexpr uint8_t kMagicDbg[] = {0x44};
constexpr uint8_t kMagicCtrlGpu[] = {0x47};
// host1x ioctls use 0, nvgpu channel ioctls 'H', SET/GET_USER_DATA 'G'
constexpr uint8_t kMagicChannel[] = {0x00, 0x47, 0x48};

// NvDrvPermission bits (Switchbrew): 0 Gpu, 1 GpuDebug, 2 GpuSchedule, 3 VIC, 4 VideoEncoder,
// 5 VideoDecoder, 6 TSEC, 7 JPEG, 8 Display.
const std::vector<DeviceDesc>& Table() {
  static const std::vector<DeviceDesc> kDevices = {
      {DeviceId::kNvhostCtrl, "/dev/nvhost-ctrl", kNoPermissionBit, kMagicCtrl,
       nvhost_ctrl::Ioctls()},
      {DeviceId::kNvmap, "/dev/nvmap", kNoPermissionBit, kMagicNvmap, nvmap::Ioctls()},
      {DeviceId::kNvdispCtrl, "/dev/nvdisp-ctrl", 8, kMagicDisp, nvdisp_ctrl::Ioctls()},
      {DeviceId::kNvdispDisp0, "/dev/nvdisp-disp0", 8, kMagicDisp, nvdisp::Ioctls()},
      {DeviceId::kNvdispDisp1, "/dev/nvdisp-disp1", 8, kMagicDisp, nvdisp::Ioctls()},
      {DeviceId::kNvcecCtrl, "/dev/nvcec-ctrl", 8, kMagicCec, nvcec_ctrl::Ioctls()},
      {DeviceId::kNvhdcpUpCtrl, "/dev/nvhdcp_up-ctrl", 8, kMagicHdcp, nvhdcp_up_ctrl::Ioctls()},
      {DeviceId::kNvdcutilDisp0, "/dev/nvdcutil-disp0", 8, kMagicDcutil, nvdcutil::Ioctls()},
      {DeviceId::kNvdcutilDisp1, "/dev/nvdcutil-disp1", 8, kMagicDcutil, nvdcutil::Ioctls()},
      {DeviceId::kNvschedCtrl, "/dev/nvsched-ctrl", 2, kMagicSched, nvsched_ctrl::Ioctls()},
      {DeviceId::kNverptCtrl, "/dev/nverpt-ctrl", kNoPermissionBit, kMagicErpt,
       nverpt_ctrl::Ioctls(), 0, FwRange{Fw(3, 0, 0)}},
      {DeviceId::kNvhostAsGpu, "/dev/nvhost-as-gpu", 0, kMagicAs, nvhost_as_gpu::Ioctls()},
      {DeviceId::kNvhostDbgGpu, "/dev/nvhost-dbg-gpu", 1, kMagicDbg, nvhost_dbg_gpu::Ioctls(),
       kNeedsDebugMode},
      {DeviceId::kNvhostProfGpu, "/dev/nvhost-prof-gpu", 1, kMagicDbg, nvhost_dbg_gpu::Ioctls(),
       kNeedsDebugMode},
      {DeviceId::kNvhostCtrlGpu, "/dev/nvhost-ctrl-gpu", 0, kMagicCtrlGpu,
       nvhost_ctrl_gpu::Ioctls()},
      {DeviceId::kNvhostGpu, "/dev/nvhost-gpu", 0, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostMsenc, "/dev/nvhost-msenc", 4, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostNvdec, "/dev/nvhost-nvdec", 5, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostNvjpg, "/dev/nvhost-nvjpg", 7, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostVic, "/dev/nvhost-vic", 3, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostDisplay, "/dev/nvhost-display", 8, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvhostTsec, "/dev/nvhost-tsec", 6, kMagicChannel, channel::Ioctls()},
      {DeviceId::kNvdrv, "/dev/nvdrv", kNoPermissionBit, kMagicNvdrv, nvdrv::Ioctls()},
  };
  return kDevices;
}

}  // namespace

std::span<const DeviceDesc> Devices() { return Table(); }

const DeviceDesc* FindDeviceByPath(std::string_view path) {
  for (const DeviceDesc& d : Table())
    if (d.path == path) return &d;
  return nullptr;
}

const DeviceDesc& Device(DeviceId id) { return Table()[static_cast<size_t>(id)]; }

const IoctlDesc* FindIoctl(const DeviceDesc& dev, uint32_t code, Firmware fw) {
  for (const IoctlDesc& d : dev.ioctls)
    if (d.Matches(code) && d.fw.Contains(fw)) return &d;
  return nullptr;
}

std::span<const NamedIoctl> AllIoctls() {
  static const std::vector<NamedIoctl> kAll = [] {
    std::vector<NamedIoctl> all;
    for (const DeviceDesc& dev : Table())
      for (const IoctlDesc& d : dev.ioctls) all.push_back({&dev, &d});
    return all;
  }();
  return kAll;
}

std::span<const uint8_t> AllMagics() {
  static const std::vector<uint8_t> kMagics = [] {
    std::vector<uint8_t> m;
    for (const DeviceDesc& d : Table()) m.insert(m.end(), d.magics.begin(), d.magics.end());
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
    return m;
  }();
  return kMagics;
}

bool LooksLikeNvidiaNode(std::string_view path) {
  if (!path.starts_with("/dev/")) return false;
  std::string_view name = path.substr(5);
  // NVMe (/dev/nvme*) and nvram share the "nv" prefix but are not NVIDIA's.
  static constexpr std::string_view kPrefixes[] = {"nvhost", "nvmap",    "nvdisp",  "nvcec",
                                                   "nvhdcp", "nvdcutil", "nvsched", "nverpt",
                                                   "nvdrv",  "nvidia",   "nvgpu/",  "nvgpu-"};
  for (std::string_view p : kPrefixes)
    if (name.starts_with(p)) return true;
  return name == "nvgpu";
}

}  // namespace nvsentry::abi
