// From the display's flips to frames (hostshim/sim/display/frame.h): each window a flip put on
// screen, its surface's bytes copied out of its nvmap object, for whoever records frames.
#pragma once

#include <functional>
#include <optional>

#include "hostshim/sim/display/display_head.h"
#include "hostshim/sim/display/frame.h"

namespace nvsentry::hostshim::sim {

// The frame a window's surface makes, its bytes read from the surface's object; nullopt when
// the format is not one frames know or the memory cannot be read (the guest freed it, say).
std::optional<Frame> CaptureWindow(uint32_t head, uint64_t vblank, const PresentedSurface& s);

// An observer for Display::SetFrameObserver that hands every `every`-th flip of each head to
// `out`, one Frame per window it shows, each only if `wanted` (when given) says it would be kept;
// the others are not read at all.
FrameObserver CaptureFrames(std::function<void(Frame)> out, uint32_t every,
                            std::function<bool()> wanted = nullptr);

}  // namespace nvsentry::hostshim::sim
