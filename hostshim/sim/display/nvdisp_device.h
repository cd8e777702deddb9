// /dev/nvdisp-disp0 and -disp1 on the simulated GPU: one session of a display head
// (display_head.h holds the head's state, shared by its sessions). Windows a session holds are
// released when it closes, as the L4T driver does at release.
//
// Decisions where Switchbrew is silent (docs/simulated-gpu.md has the table):
// - FLIP: the L4T tegra_dc_ext_flip layout (abi/devices/nvdisp.h). A window slot with index < 0
//   is unused; an index >= 3 is BadParameter, a window the session does not hold AccessDenied; a
//   buff_id of 0 disables the window; an unknown handle is BadValue; a format other than B5G6R5,
//   B8G8R8A8, R8G8B8A8, a zero or over-4096 size, a pitch below the row or a block height over
//   32 GOBs BadParameter; a surface past its object InvalidSize. Pre-fence id 0 or 0xFFFFFFFF
//   is none. The outputs are post_syncpt_id (the head's flip syncpoint) and post_syncpt_val.
// - GET_MODE_DB(2): a count then the modes (the sizes fit 201 of each); the panel's one mode.
// - GET_VBLANK_SYNCPT answers the head's vblank syncpoint; GET_WINMASK the three windows.
// - GET_HEAD_STATUS 1 for the connected head, 0 for the other; GET_UNDERFLOWS zeros.
// - SET_LUT, SET_CSC, SET_CMU, SET_AVI_INFOFRAME store their bytes; SET_CMU and
//   GET_AVI_INFOFRAME give the stored bytes back.
#pragma once

#include <memory>

#include "hostshim/backend.h"
#include "hostshim/sim/display/display_head.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {

class NvdispDevice : public DeviceBackend {
 public:
  NvdispDevice(DisplayHead& head, Nvmap& nvmap) : head_(head), nvmap_(nvmap) {}
  ~NvdispDevice() override {
    head_.CancelFlips(this);
    head_.ReleaseWindows(this);
  }

  Result Ioctl(Call& call) override;

  static constexpr uint32_t kMaxSurfaceSide = 4096;

 private:
  Result Flip(Call& call);
  Result ModeDb(Call& call, bool two);

  DisplayHead& head_;
  Nvmap& nvmap_;
  absl::Mutex mu_;
  uint8_t avi_infoframe_[96] ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace nvsentry::hostshim::sim
