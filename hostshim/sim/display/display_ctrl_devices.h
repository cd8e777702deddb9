// The display's other devices on the simulated GPU, answering as a handheld with its built-in
// panel and nothing on the external output would (docs/simulated-gpu.md has each decision):
// - /dev/nvdisp-ctrl: two outputs (L4T tegra_dc_ext_control_output_properties, whose 20 bytes
//   match GET_DISPLAY_PROPERTIES): 0 the DSI panel on head 0, connected; 1 the HDMI output on
//   head 1, disconnected. No EDID (DispEdidFailure). Hotplug events never fire (zeros). The
//   vblank event of a head answers L4T's tegra_dc_ext_control_event_vblank (16 bytes: head,
//   reserved, the last vblank's CLOCK_MONOTONIC ns). SUSPEND is stored; IS_DISPLAY_OLED 0.
// - /dev/nvcec-ctrl: no HDMI sink, so no CEC bus: ENABLE and SET_LADDR are accepted,
//   GET_PADDR, WRITE and READ answer DispNotAttached, the status queries zeros.
// - /dev/nvhdcp_up-ctrl: HDCP needs a sink: READ_STATUS and READ_M answer DispNotAttached,
//   ENABLE of 0 is accepted and of anything else DispNotAttached, the state queries zeros.
// - /dev/nvdcutil-disp0/1: the test hooks store what they are given; GET_MODE answers the head's
//   mode (MODE2 layout); the DSI packet tests run on head 0 (the DSI panel; reads answer zeros)
//   and are NotSupported on head 1; the DP tests are NotSupported (no DP output).
#pragma once

#include <memory>

#include "abi/catalogue.h"
#include "hostshim/backend.h"
#include "hostshim/sim/display/display.h"

namespace nvsentry::hostshim::sim {

// A session of one of the devices above, or null when `device` is none of them.
std::unique_ptr<DeviceBackend> OpenDisplayCtrlDevice(const abi::DeviceDesc& device,
                                                     Display& display);

}  // namespace nvsentry::hostshim::sim
