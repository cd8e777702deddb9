#include "hostshim/sim/display/display_head.h"

#include <time.h>

#include <algorithm>
#include <cstring>

#include "hostshim/backend.h"
#include "hostshim/sim/memory/block_linear.h"

namespace nvsentry::hostshim::sim {
namespace nd = abi::nvdisp;
using abi::NvError;

namespace {

// CEA-861 720p60 (VIC 4): 1650 x 750 total at 74.25 MHz is 60 Hz. The built-in panel's real
// timings are not public; these are the standard ones for its size and rate.
constexpr nd::Mode kPanelMode = {
    .h_active = 1280,
    .v_active = 720,
    .h_sync_width = 40,
    .v_sync_width = 5,
    .h_front_porch = 110,
    .v_front_porch = 5,
    .h_back_porch = 220,
    .v_back_porch = 20,
    .h_ref_to_sync = 1,
    .v_ref_to_sync = 1,
    .pclk_khz = 74250,
    .bits_per_pixel = 0,
    .vmode = 0,
    .reserved = 0,
};

// The words that make a mode: the timings and the clock (bpp and vmode are the caller's).
bool SameTimings(const nd::Mode& a, const nd::Mode& b) {
  return std::memcmp(&a, &b, offsetof(nd::Mode, bits_per_pixel)) == 0;
}

uint32_t Crc32(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

}  // namespace

uint32_t FormatBytesPerPixel(uint32_t format) {
  switch (format) {
    case nd::kFmtB5G6R5: return 2;
    case nd::kFmtB8G8R8A8:
    case nd::kFmtR8G8B8A8: return 4;
    default: return 0;
  }
}

uint64_t SurfaceBytes(const PresentedSurface& s) {
  const uint64_t row = uint64_t{s.width} * s.bytes_per_pixel;
  if (s.block_linear) {
    BlockLinearSurface bl;
    bl.width = row;
    bl.height = s.height;
    bl.block_height_log2 = s.block_height_log2;
    return bl.SizeBytes();
  }
  return s.height == 0 ? 0 : uint64_t{s.pitch} * (s.height - 1) + row;
}

// A pre-fence parked in the syncpoint table. The head may go first, or the flip be cancelled (its
// session closed): the waiter then does nothing and the table drops it at its next sweep. (A
// cancelled flip's waiters stayed parked until a fence that might never come: a guest's open,
// flips on its own syncpoint past any increment and close, repeated, grew the table for good.)
class DisplayHead::FenceWaiter : public SyncpointWaiter {
 public:
  FenceWaiter(std::weak_ptr<DisplayHead> head, uint64_t seq,
              std::shared_ptr<std::atomic<bool>> gone)
      : head_(std::move(head)), seq_(seq), gone_(std::move(gone)) {}
  void Reached(uint32_t) override {
    if (auto h = head_.lock()) h->FenceReached(seq_);
  }
  void TimedOut() override {}  // parked without a deadline
  bool Abandoned() override { return gone_->load(std::memory_order_acquire) || head_.expired(); }

 private:
  std::weak_ptr<DisplayHead> head_;
  const uint64_t seq_;
  const std::shared_ptr<std::atomic<bool>> gone_;
};

DisplayHead::DisplayHead(uint32_t index, Syncpoints& syncpoints, std::function<void()> wake)
    : index_(index), syncpoints_(syncpoints), wake_(std::move(wake)) {
  if (connected()) {
    mode_ = kPanelMode;
    mode2_.mode = kPanelMode;
  }
}

std::optional<nd::Mode> DisplayHead::PanelMode() const {
  if (!connected()) return std::nullopt;
  return kPanelMode;
}

NvError DisplayHead::GetWindow(const void* session, uint32_t window) {
  if (window >= kWindows) return NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  if (window_owner_[window] != nullptr) return NvError::kBusy;
  window_owner_[window] = session;
  return NvError::kSuccess;
}

NvError DisplayHead::PutWindow(const void* session, uint32_t window) {
  if (window >= kWindows) return NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  if (window_owner_[window] != session) return NvError::kAccessDenied;
  window_owner_[window] = nullptr;
  return NvError::kSuccess;
}

void DisplayHead::ReleaseWindows(const void* session) {
  absl::MutexLock l(&mu_);
  for (const void*& owner : window_owner_)
    if (owner == session) owner = nullptr;
}

bool DisplayHead::Holds(const void* session, uint32_t window) const {
  absl::MutexLock l(&mu_);
  return window < kWindows && window_owner_[window] == session;
}

NvError DisplayHead::ValidateMode(const nd::Mode& mode) const {
  return connected() && SameTimings(mode, kPanelMode) ? NvError::kSuccess : NvError::kBadParameter;
}

NvError DisplayHead::SetMode(const nd::Mode& mode) {
  NvError err = ValidateMode(mode);
  if (err != NvError::kSuccess) return err;
  absl::MutexLock l(&mu_);
  mode_ = mode;
  mode2_.mode = mode;
  return NvError::kSuccess;
}

nd::Mode DisplayHead::CurrentMode() const {
  absl::MutexLock l(&mu_);
  return mode_;
}

NvError DisplayHead::SetMode2(const nd::Mode2& mode) {
  NvError err = ValidateMode(mode.mode);
  if (err != NvError::kSuccess) return err;
  absl::MutexLock l(&mu_);
  mode2_ = mode;
  mode_ = mode.mode;
  return NvError::kSuccess;
}

nd::Mode2 DisplayHead::CurrentMode2() const {
  absl::MutexLock l(&mu_);
  return mode2_;
}

void DisplayHead::SetLut(std::span<const uint8_t> lut) {
  absl::MutexLock l(&mu_);
  lut_.assign(lut.begin(), lut.end());
}
void DisplayHead::SetCsc(std::span<const uint8_t> csc) {
  absl::MutexLock l(&mu_);
  csc_.assign(csc.begin(), csc.end());
}
void DisplayHead::SetCmu(std::span<const uint8_t> cmu) {
  absl::MutexLock l(&mu_);
  cmu_.assign(cmu.begin(), cmu.end());
}
std::vector<uint8_t> DisplayHead::Lut() const {
  absl::MutexLock l(&mu_);
  return lut_;
}
std::vector<uint8_t> DisplayHead::Csc() const {
  absl::MutexLock l(&mu_);
  return csc_;
}
std::vector<uint8_t> DisplayHead::Cmu() const {
  absl::MutexLock l(&mu_);
  return cmu_;
}

void DisplayHead::ConfigCrc(bool enable) {
  absl::MutexLock l(&mu_);
  crc_enabled_ = enable;
}

uint32_t DisplayHead::Crc() const {
  absl::MutexLock l(&mu_);
  if (!crc_enabled_) return 0;
  uint32_t crc = Crc32(0, &vblanks_, sizeof vblanks_);
  for (const auto& s : on_screen_) {
    if (!s) continue;
    const uint32_t words[] = {s->window, s->nvmap_handle, static_cast<uint32_t>(s->offset),
                              s->format, s->width,        s->height,
                              s->pitch,  s->block_linear, s->block_height_log2};
    crc = Crc32(crc, words, sizeof words);
  }
  return crc;
}

nd::BacklightRange DisplayHead::Backlight() const {
  absl::MutexLock l(&mu_);
  return backlight_;
}

NvError DisplayHead::SetBacklightMax(uint32_t max) {
  absl::MutexLock l(&mu_);
  if (max > kBacklightMax || max < backlight_.min) return NvError::kBadParameter;
  backlight_.max = max;
  return NvError::kSuccess;
}

NvError DisplayHead::SetBacklightMin(uint32_t min) {
  absl::MutexLock l(&mu_);
  if (min > backlight_.max) return NvError::kBadParameter;
  backlight_.min = min;
  return NvError::kSuccess;
}

uint32_t DisplayHead::Dpms(uint32_t state) {
  absl::MutexLock l(&mu_);
  dpms_ = state;
  return dpms_;
}

NvError DisplayHead::Flip(const void* session,
                          std::vector<std::pair<uint32_t, std::optional<PresentedSurface>>> windows,
                          const std::vector<FlipFence>& pre_fences, uint32_t* post_fence) {
  if (!connected()) return NvError::kInvalidState;
  for (const FlipFence& f : pre_fences) {
    if (!Syncpoints::ValidId(f.id)) return NvError::kBadParameter;
    // The display's own syncpoints move only as flips are shown and vblanks pass: a fence past
    // what they will ever reach would hold every later flip of the head, anyone's.
    if (f.id == flip_syncpoint() && !SyncptReached(syncpoints_.ReadMax(f.id), f.value))
      return NvError::kBadParameter;
    if (f.id == vblank_syncpoint() && static_cast<int32_t>(f.value - syncpoints_.Read(f.id)) >
                                          static_cast<int32_t>(kMaxVblanksAhead))
      return NvError::kBadParameter;
    const bool own = f.id == flip_syncpoint() || f.id == vblank_syncpoint();
    if (!own && !syncpoints_.Owned(f.id)) return NvError::kAccessDenied;
  }
  uint64_t seq;
  std::shared_ptr<std::atomic<bool>> gone;
  {
    absl::MutexLock l(&mu_);
    // Cancelled flips (their sessions closed) wait only for their vblank: they do not count
    // against a live session's room, but bound the queue all the same.
    const size_t live = static_cast<size_t>(std::count_if(
        queue_.begin(), queue_.end(), [](const PendingFlip& p) { return !p.cancelled; }));
    if (live >= kMaxQueuedFlips || queue_.size() >= 4 * kMaxQueuedFlips)
      return NvError::kInsufficientMemory;
    seq = next_seq_++;
    *post_fence = syncpoints_.IncrementMax(flip_syncpoint(), 1);
    queue_.push_back({seq, static_cast<uint32_t>(pre_fences.size()) + 1, *post_fence,
                      std::move(windows), session});
    gone = queue_.back().gone;
  }
  std::weak_ptr<DisplayHead> self = weak_from_this();
  for (const FlipFence& f : pre_fences) {
    uint32_t value;
    auto start = syncpoints_.Wait(
        f.id, f.value, -1, [&] { return std::make_shared<FenceWaiter>(self, seq, gone); }, &value);
    if (start != Syncpoints::WaitStart::kParked) FenceReached(seq);
  }
  FenceReached(seq);  // registration done
  return NvError::kSuccess;
}

void DisplayHead::CancelFlips(const void* session) {
  bool ready, any = false;
  {
    absl::MutexLock l(&mu_);
    for (PendingFlip& p : queue_) {
      if (p.session != session) continue;
      p.cancelled = true;
      p.outstanding = 0;  // its pre-fences' waiters find it done and do nothing
      p.windows.clear();  // and its surfaces' objects go
      p.gone->store(true, std::memory_order_release);
      any = true;
    }
    ready = FrontReadyLocked();
  }
  if (any) NoteAbandonedCall();  // the table's next sweep looks for abandoned waiters
  if (ready) wake_();
}

void DisplayHead::FenceReached(uint64_t seq) {
  bool ready;
  {
    absl::MutexLock l(&mu_);
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [seq](const PendingFlip& p) { return p.seq == seq; });
    if (it == queue_.end() || it->outstanding == 0) return;
    --it->outstanding;
    ready = FrontReadyLocked();
  }
  if (ready) wake_();
}

bool DisplayHead::FrontReadyLocked() const {
  return !queue_.empty() && queue_.front().outstanding == 0;
}

void DisplayHead::Vblank() {
  if (!connected()) return;
  std::optional<PresentedFrame> frame;
  FrameObserver observer;
  bool flipped = false;
  {
    absl::MutexLock l(&mu_);
    ++vblanks_;
    last_vblank_ns_ = MonotonicNs();
    if (FrontReadyLocked()) {
      PendingFlip flip = std::move(queue_.front());
      queue_.pop_front();
      flipped = true;
      if (!flip.cancelled) {
        for (const auto& [w, surface] : flip.windows) on_screen_[w] = surface;
        frame = PresentedFrame{index_, flip.post_fence, vblanks_, std::move(flip.windows)};
        observer = observer_;
      }
    }
  }
  // The observer sees the frame before the post-fence is reached: a guest that exits once its
  // flip is on screen must not take the surface's memory away from under the observer.
  if (frame && observer) observer(*frame);
  // The increments come after the state they announce: a guest woken by them sees it.
  syncpoints_.Increment(vblank_syncpoint());
  if (flipped) syncpoints_.Increment(flip_syncpoint());
}

bool DisplayHead::WantsVblank() const {
  if (!connected()) return false;
  {
    absl::MutexLock l(&mu_);
    if (FrontReadyLocked()) return true;
  }
  return syncpoints_.Waiting(vblank_syncpoint());
}

uint64_t DisplayHead::vblanks() const {
  absl::MutexLock l(&mu_);
  return vblanks_;
}

int64_t DisplayHead::last_vblank_ns() const {
  absl::MutexLock l(&mu_);
  return last_vblank_ns_;
}

size_t DisplayHead::queued_flips() const {
  absl::MutexLock l(&mu_);
  return queue_.size();
}

std::vector<PresentedSurface> DisplayHead::OnScreen() const {
  absl::MutexLock l(&mu_);
  std::vector<PresentedSurface> out;
  for (const auto& s : on_screen_)
    if (s) out.push_back(*s);
  return out;
}

void DisplayHead::SetFrameObserver(FrameObserver observer) {
  absl::MutexLock l(&mu_);
  observer_ = std::move(observer);
}

}  // namespace nvsentry::hostshim::sim
