// The engine classes of the GM20B (Tegra X1) that a GPU channel can create with ALLOC_OBJ_CTX and
// bind to a subchannel with SET_OBJECT, and the engine each belongs to. The numbers are NVIDIA's
// (open-gpu-doc class headers: clb197.h, clb1c0.h, cl902d.h, cla140.h, clb0b5.h); the engines
// are the Linux nvgpu driver's: the graphics engine (PGRAPH) runs 3D, compute, 2D and
// inline-to-memory and needs the channel's graphics object context; the copy engine runs DMA
// copies without one.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace nvsentry::abi {

enum class GpuEngine : uint8_t { kGraphics, kCopy };

struct GpuClass {
  uint32_t number;
  std::string_view name;
  GpuEngine engine;
};

inline constexpr std::array<GpuClass, 5> kGpuClasses = {{
    {0xB197, "3D", GpuEngine::kGraphics},
    {0xB1C0, "compute", GpuEngine::kGraphics},
    {0x902D, "2D", GpuEngine::kGraphics},
    {0xA140, "inline-to-memory", GpuEngine::kGraphics},
    {0xB0B5, "DMA copy", GpuEngine::kCopy},
}};

// The class, or null when `number` is not a GM20B engine class.
constexpr const GpuClass* FindGpuClass(uint32_t number) {
  for (const GpuClass& c : kGpuClasses)
    if (c.number == number) return &c;
  return nullptr;
}

}  // namespace nvsentry::abi
