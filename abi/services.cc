#include "abi/services.h"

namespace nvsentry::abi {
namespace {

constexpr PermissionBitDesc kBits[] = {
    {0, "Gpu", "/dev/nvhost-gpu, /dev/nvhost-ctrl-gpu, /dev/nvhost-as-gpu"},
    {1, "GpuDebug", "/dev/nvhost-dbg-gpu, /dev/nvhost-prof-gpu"},
    {2, "GpuSchedule", "/dev/nvsched-ctrl"},
    {3, "VIC", "/dev/nvhost-vic"},
    {4, "VideoEncoder", "/dev/nvhost-msenc"},
    {5, "VideoDecoder", "/dev/nvhost-nvdec"},
    {6, "TSEC", "/dev/nvhost-tsec"},
    {7, "JPEG", "/dev/nvhost-nvjpg"},
    {8, "Display", "/dev/nvhost-display and the nvdisp, nvcec, nvhdcp_up, nvdcutil nodes"},
    {9, "ImportMemory", "NVMAP_IOC_FROM_ID of another process's handles"},
    {10, "NoCheckedAruid", "SetAruidWithoutCheck"},
    {11, "GraphicsFirmwareMemoryMargin", "SetGraphicsFirmwareMemoryMarginEnabled"},
    {12, "ImportExported", "NVMAP_IOC_FROM_ID of handles exported for the aruid"},
    {13, "GpuVaHigh", "small-page GPU VA pages 0xC0000-0x580000 instead of 0x0-0xC0000"},
    {14, "ExportForAruid", "NVMAP_IOC_EXPORT_FOR_ARUID, NVMAP_IOC_REMOVE_EXPORT_FOR_ARUID"},
    {15, "FullVaRanges", "GPU range 0x0-0x100000000 and non-GPU 0x0-0xE0000000"},
};

constexpr std::string_view kServices[] = {"nvdrv", "nvdrv:a", "nvdrv:s", "nvdrv:t"};

uint32_t Known(std::string_view service, Firmware fw) {
  const bool v3 = fw >= Fw(3, 0, 0);
  if (service == "nvdrv") return fw >= Fw(11, 0, 0) ? kDefaultServiceMask : v3 ? 0xA82B : 0x2B;
  if (service == "nvdrv:a") return v3 ? 0x10A9 : 0xA9;
  if (service == "nvdrv:s") return v3 ? 0x439E : 0x39E;
  return 0;
}

}  // namespace

std::span<const PermissionBitDesc> PermissionBits() { return kBits; }
std::span<const std::string_view> ServiceNames() { return kServices; }

std::optional<uint32_t> ServiceMask(std::string_view service, Firmware fw) {
  if (service == "nvdrv:t") return Known("nvdrv", fw) | Known("nvdrv:a", fw) | Known("nvdrv:s", fw);
  if (service == "nvdrv" || service == "nvdrv:a" || service == "nvdrv:s") return Known(service, fw);
  return std::nullopt;
}

}  // namespace nvsentry::abi
