// One head of the simulated display controller, shared by every session of its /dev/nvdisp-dispN:
// the panel behind it, the windows and which session holds each, the mode, the colour state
// (LUT, CSC, CMU), CRC capture, the backlight range, and the flips queued for the vblank.
//
// Head 0 is the built-in 1280x720 60 Hz panel; head 1 is the external output, disconnected (no
// modes, no vblanks, flips refused). Each head has its vblank syncpoint (26, 27) and its flip
// syncpoint (8, 9), the L4T nvhost header's NVSYNCPT_VBLANK0/1 and NVSYNCPT_DISP0/1_A.
//
// Flips: a flip names up to three windows with their surfaces and pre-fences. It is queued at
// once (bounded, kMaxQueuedFlips) and its post-fence handed out: the flip syncpoint's next max. Its
// pre-fences are syncpoint waits parked in the table (nobody blocks); once all are reached and
// the flips before it are on screen, the next vblank puts it on screen, one flip per vblank, and
// increments the flip syncpoint to the post-fence. The frame observer then sees the windows.
//
// Thread-safe. Lock order: the head's lock, then the syncpoint table's.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "abi/devices/nvdisp.h"
#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// What a window shows: where the surface is and how it is laid out.
struct PresentedSurface {
  uint32_t window = 0;
  uint32_t nvmap_handle = 0;
  std::shared_ptr<NvmapObject> object;  // keeps the memory alive while on screen
  uint64_t offset = 0;
  uint32_t format = 0;  // TEGRA_DC_EXT_FMT_*
  uint32_t bytes_per_pixel = 0;
  uint32_t width = 0;   // pixels
  uint32_t height = 0;  // rows
  bool block_linear = false;
  uint32_t pitch = 0;              // bytes per row (pitch surfaces)
  uint32_t block_height_log2 = 0;  // GOBs per block, log2 (block-linear surfaces)
};

// A flip that reached the screen: the windows it changed (an absent surface disables the window).
struct PresentedFrame {
  uint32_t head = 0;
  uint32_t post_fence = 0;  // the flip syncpoint's value now
  uint64_t vblank = 0;      // vblanks of the head so far
  std::vector<std::pair<uint32_t, std::optional<PresentedSurface>>> windows;
};
using FrameObserver = std::function<void(const PresentedFrame&)>;

struct FlipFence {
  uint32_t id;
  uint32_t value;
};

class DisplayHead : public std::enable_shared_from_this<DisplayHead> {
 public:
  static constexpr uint32_t kWindows = abi::nvdisp::kFlipWindows;  // windows A, B, C
  static constexpr size_t kMaxQueuedFlips = 16;
  static constexpr uint32_t kBacklightMax = 255;

  // `wake` starts the vblank clock (called with the head's lock held; must not block).
  DisplayHead(uint32_t index, Syncpoints& syncpoints, std::function<void()> wake);

  uint32_t index() const { return index_; }
  bool connected() const { return index_ == 0; }
  uint32_t vblank_syncpoint() const { return 26 + index_; }
  uint32_t flip_syncpoint() const { return 8 + index_; }
  // The panel's one mode (CEA-861 720p60 timings), or none for the disconnected head.
  std::optional<abi::nvdisp::Mode> PanelMode() const;

  // Windows: GET_WINDOW of a window held by another session is Busy, of one out of range
  // BadParameter; PUT_WINDOW of one the session does not hold AccessDenied (L4T's EBUSY, EINVAL,
  // EACCES).
  abi::NvError GetWindow(const void* session, uint32_t window);
  abi::NvError PutWindow(const void* session, uint32_t window);
  void ReleaseWindows(const void* session);
  bool Holds(const void* session, uint32_t window) const;

  // Modes: only the panel's mode validates (BadParameter otherwise, L4T's EINVAL; the
  // DispModeNotSupported code would reach the guest as EOPNOTSUPP, "not implemented"); SET stores.
  abi::NvError ValidateMode(const abi::nvdisp::Mode& mode) const;
  abi::NvError SetMode(const abi::nvdisp::Mode& mode);
  abi::nvdisp::Mode CurrentMode() const;
  abi::NvError SetMode2(const abi::nvdisp::Mode2& mode);
  abi::nvdisp::Mode2 CurrentMode2() const;

  // Colour state and CRC capture, stored as given and read back.
  void SetLut(std::span<const uint8_t> lut);
  void SetCsc(std::span<const uint8_t> csc);
  void SetCmu(std::span<const uint8_t> cmu);
  std::vector<uint8_t> Lut() const;
  std::vector<uint8_t> Csc() const;
  std::vector<uint8_t> Cmu() const;
  void ConfigCrc(bool enable);
  // 0 while capture is off; else a CRC-32 of what is on screen (the surfaces' descriptions and the
  // frame count: the simulator does not scan pixels out).
  uint32_t Crc() const;
  abi::nvdisp::BacklightRange Backlight() const;
  abi::NvError SetBacklightMax(uint32_t max);
  abi::NvError SetBacklightMin(uint32_t min);
  uint32_t Dpms(uint32_t state);

  // Queues a flip (windows already checked by the device: each held by the caller). Pre-fences
  // must name syncpoints the guest owns or the display's own (else AccessDenied; BadParameter for
  // ids that do not exist). InvalidState on the disconnected head; InsufficientMemory when
  // kMaxQueuedFlips are queued (cancelled ones not counted, up to four times as many in all).
  // A pre-fence on the display's own syncpoints must be one that can come: on the flip syncpoint
  // at most the last post-fence handed out, on the vblank syncpoint at most kMaxVblanksAhead
  // vblanks away (else BadParameter: such a flip would hold the head's queue for good).
  // `session` owns the flip: CancelFlips drops it.
  abi::NvError Flip(const void* session,
                    std::vector<std::pair<uint32_t, std::optional<PresentedSurface>>> windows,
                    const std::vector<FlipFence>& pre_fences, uint32_t* post_fence);
  // The session is closing: its queued flips are not shown, their pre-fences stop holding the
  // queue and their surfaces are let go; each still moves the flip syncpoint at its vblank, so
  // every post-fence handed out (theirs and the later flips') is reached as promised.
  void CancelFlips(const void* session);
  static constexpr uint32_t kMaxVblanksAhead = 600;  // 10 s at 60 Hz

  // One vblank (the clock's thread): increments the vblank syncpoint and puts the first flip on
  // screen if its fences are reached.
  void Vblank();
  // Whether the clock should keep ticking for this head: a flip ready for the screen, or a waiter
  // on the vblank syncpoint.
  bool WantsVblank() const;
  uint64_t vblanks() const;
  int64_t last_vblank_ns() const;  // CLOCK_MONOTONIC of the last vblank, 0 before the first
  size_t queued_flips() const;
  std::vector<PresentedSurface> OnScreen() const;
  void SetFrameObserver(FrameObserver observer);

 private:
  struct PendingFlip {
    uint64_t seq;
    uint32_t outstanding;  // pre-fences not reached, plus one while Flip still registers them
    uint32_t post_fence;
    std::vector<std::pair<uint32_t, std::optional<PresentedSurface>>> windows;
    const void* session = nullptr;
    bool cancelled = false;  // its session closed: only its post-fence is left to reach
    // Set with `cancelled`: its pre-fences' waiters read it (a flag, under the syncpoint table's
    // lock) and the table drops them at its next sweep.
    std::shared_ptr<std::atomic<bool>> gone = std::make_shared<std::atomic<bool>>(false);
  };
  class FenceWaiter;
  void FenceReached(uint64_t seq);
  bool FrontReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint32_t index_;
  Syncpoints& syncpoints_;
  const std::function<void()> wake_;

  mutable absl::Mutex mu_;
  const void* window_owner_[kWindows] ABSL_GUARDED_BY(mu_) = {};
  std::optional<PresentedSurface> on_screen_[kWindows] ABSL_GUARDED_BY(mu_);
  abi::nvdisp::Mode mode_ ABSL_GUARDED_BY(mu_) = {};
  abi::nvdisp::Mode2 mode2_ ABSL_GUARDED_BY(mu_) = {};
  std::vector<uint8_t> lut_ ABSL_GUARDED_BY(mu_), csc_ ABSL_GUARDED_BY(mu_),
      cmu_ ABSL_GUARDED_BY(mu_);
  bool crc_enabled_ ABSL_GUARDED_BY(mu_) = false;
  abi::nvdisp::BacklightRange backlight_ ABSL_GUARDED_BY(mu_) = {0, kBacklightMax};
  uint32_t dpms_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<PendingFlip> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t vblanks_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_vblank_ns_ ABSL_GUARDED_BY(mu_) = 0;
  FrameObserver observer_ ABSL_GUARDED_BY(mu_);
};

// The bytes a surface covers from its offset: pitch rows, or whole GOB blocks.
uint64_t SurfaceBytes(const PresentedSurface& s);
// Bytes per pixel of a tegra_dc_ext format the display accepts, 0 for others.
uint32_t FormatBytesPerPixel(uint32_t format);

}  // namespace nvsentry::hostshim::sim
