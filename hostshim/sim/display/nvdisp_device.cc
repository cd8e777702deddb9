#include "hostshim/sim/display/nvdisp_device.h"

#include <cstring>
#include <vector>

#include "abi/devices/nvdisp.h"
#include "hostshim/sim/memory/block_linear.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace nd = abi::nvdisp;
using abi::NvError;

namespace {

constexpr uint32_t kNoSyncpoint = 0xFFFFFFFF;  // NVSYNCPT_INVALID

uint32_t& U32(Call& call) { return ArgAs<uint32_t>(call.arg); }

// The surface a window attribute names, checked; `object` resolved by the caller.
NvError CheckSurface(const nd::FlipWindow& w, std::shared_ptr<NvmapObject> object,
                     PresentedSurface* s) {
  s->window = static_cast<uint32_t>(w.index);
  s->nvmap_handle = w.buff_id;
  s->offset = w.offset;
  s->format = w.pixformat;
  s->bytes_per_pixel = FormatBytesPerPixel(w.pixformat);
  s->width = w.w >> 12;  // 20.12 fixed point
  s->height = w.h >> 12;
  s->block_linear = (w.flags & nd::kFlipFlagBlockLinear) != 0;
  s->pitch = w.stride;
  s->block_height_log2 = w.block_height_log2;
  if (s->bytes_per_pixel == 0) return NvError::kBadParameter;
  if (s->width == 0 || s->height == 0 || s->width > NvdispDevice::kMaxSurfaceSide ||
      s->height > NvdispDevice::kMaxSurfaceSide)
    return NvError::kBadParameter;
  if (s->block_linear ? s->block_height_log2 > kMaxBlockLog2
                      : uint64_t{s->pitch} < uint64_t{s->width} * s->bytes_per_pixel)
    return NvError::kBadParameter;
  if (s->offset + SurfaceBytes(*s) > object->size()) return NvError::kInvalidSize;
  s->object = std::move(object);
  return NvError::kSuccess;
}

}  // namespace

Result NvdispDevice::Ioctl(Call& call) {
  switch (call.desc.code) {
    case nd::kGetWindow: return Result::Done(head_.GetWindow(this, U32(call)));
    case nd::kPutWindow: return Result::Done(head_.PutWindow(this, U32(call)));
    case nd::kFlip: return Flip(call);
    case nd::kGetMode: {
      nd::Mode m = head_.CurrentMode();
      m.bits_per_pixel = 0;  // Switchbrew: GET_MODE reports 0 for both
      m.vmode = 0;
      ArgAs<nd::Mode>(call.arg) = m;
      return Result::Done(NvError::kSuccess);
    }
    case nd::kSetMode: return Result::Done(head_.SetMode(ArgAs<nd::Mode>(call.arg)));
    case nd::kValidateMode: return Result::Done(head_.ValidateMode(ArgAs<nd::Mode>(call.arg)));
    case nd::kGetMode2:
      ArgAs<nd::Mode2>(call.arg) = head_.CurrentMode2();
      return Result::Done(NvError::kSuccess);
    case nd::kSetMode2: return Result::Done(head_.SetMode2(ArgAs<nd::Mode2>(call.arg)));
    case nd::kValidateMode2:
      return Result::Done(head_.ValidateMode(ArgAs<nd::Mode2>(call.arg).mode));
    case nd::kGetModeDb: return ModeDb(call, false);
    case nd::kGetModeDb2: return ModeDb(call, true);
    case nd::kSetLut: head_.SetLut(call.arg); return Result::Done(NvError::kSuccess);
    case nd::kSetCsc: head_.SetCsc(call.arg); return Result::Done(NvError::kSuccess);
    case nd::kSetCmu: head_.SetCmu(call.arg); return Result::Done(NvError::kSuccess);
    case nd::kConfigCrc: head_.ConfigCrc(call.arg[0] != 0); return Result::Done(NvError::kSuccess);
    case nd::kGetCrc: U32(call) = head_.Crc(); return Result::Done(NvError::kSuccess);
    case nd::kGetHeadStatus:
      U32(call) = head_.connected() ? 1 : 0;
      return Result::Done(NvError::kSuccess);
    case nd::kGetVblankSyncpt:
      U32(call) = head_.vblank_syncpoint();
      return Result::Done(NvError::kSuccess);
    case nd::kGetUnderflows:
      std::memset(call.arg.data(), 0, call.arg.size());
      return Result::Done(NvError::kSuccess);
    case nd::kDpms: U32(call) = head_.Dpms(U32(call)); return Result::Done(NvError::kSuccess);
    case nd::kGetAviInfoframe: {
      absl::MutexLock l(&mu_);
      std::memcpy(call.arg.data(), avi_infoframe_, sizeof avi_infoframe_);
      return Result::Done(NvError::kSuccess);
    }
    case nd::kSetAviInfoframe: {
      absl::MutexLock l(&mu_);
      std::memcpy(avi_infoframe_, call.arg.data(), sizeof avi_infoframe_);
      return Result::Done(NvError::kSuccess);
    }
    case nd::kPanelGetVendorId: {
      if (!head_.connected()) return Result::Done(NvError::kDispNotAttached);
      // An assumed id (no public table maps these three bytes): vendor, model, revision.
      const uint8_t id[3] = {0x10, 0x01, 0x00};
      std::memcpy(call.arg.data(), id, sizeof id);
      return Result::Done(NvError::kSuccess);
    }
    case nd::kGetWinmask:
      U32(call) = (1u << DisplayHead::kWindows) - 1;
      return Result::Done(NvError::kSuccess);
    case nd::kGetBacklightRange:
      ArgAs<nd::BacklightRange>(call.arg) = head_.Backlight();
      return Result::Done(NvError::kSuccess);
    case nd::kSetBacklightRangeMax: return Result::Done(head_.SetBacklightMax(U32(call)));
    case nd::kSetBacklightRangeMin: return Result::Done(head_.SetBacklightMin(U32(call)));
    case nd::kSendPanelMsg:
    case nd::kGetPanelData: {
      auto& m = ArgAs<nd::PanelMsg>(call.arg);
      if (m.size > sizeof m.msg) return Result::Done(NvError::kBadParameter);
      if (!head_.connected()) return Result::Done(NvError::kDispNotAttached);
      // The panel answers reads with zeros; writes are accepted and have no effect.
      if (call.desc.code == nd::kGetPanelData) std::memset(m.msg, 0, sizeof m.msg);
      return Result::Done(NvError::kSuccess);
    }
    default: return Unimplemented(call);
  }
}

Result NvdispDevice::ModeDb(Call& call, bool two) {
  std::memset(call.arg.data(), 0, call.arg.size());
  std::optional<nd::Mode> mode = head_.PanelMode();
  if (!mode) return Result::Done(NvError::kSuccess);  // nothing connected: no modes
  mode->bits_per_pixel = 24;
  if (two) {
    auto& db = ArgAs<nd::ModeDb2>(call.arg);
    db.count = 1;
    db.modes[0].mode = *mode;
  } else {
    auto& db = ArgAs<nd::ModeDb>(call.arg);
    db.count = 1;
    db.modes[0] = *mode;
  }
  return Result::Done(NvError::kSuccess);
}

Result NvdispDevice::Flip(Call& call) {
  auto& f = ArgAs<nd::Flip>(call.arg);
  const pid_t tgid = call.caller ? call.caller->tgid() : -1;
  std::vector<std::pair<uint32_t, std::optional<PresentedSurface>>> windows;
  std::vector<FlipFence> fences;
  bool named[DisplayHead::kWindows] = {};
  for (const nd::FlipWindow& w : f.win) {
    if (w.index < 0) continue;
    if (static_cast<uint32_t>(w.index) >= DisplayHead::kWindows || named[w.index])
      return Result::Done(NvError::kBadParameter);
    named[w.index] = true;
    if (!head_.Holds(this, w.index)) return Result::Done(NvError::kAccessDenied);
    if (w.pre_syncpt_id != 0 && w.pre_syncpt_id != kNoSyncpoint)
      fences.push_back({w.pre_syncpt_id, w.pre_syncpt_val});
    if (w.buff_id == 0) {
      windows.emplace_back(w.index, std::nullopt);
      continue;
    }
    std::shared_ptr<NvmapObject> object = nvmap_.Resolve(tgid, w.buff_id);
    if (!object) return Result::Done(NvError::kBadValue);
    PresentedSurface s;
    NvError err = CheckSurface(w, std::move(object), &s);
    if (err != NvError::kSuccess) return Result::Done(err);
    windows.emplace_back(w.index, std::move(s));
  }
  uint32_t post = 0;
  NvError err = head_.Flip(this, std::move(windows), fences, &post);
  if (err != NvError::kSuccess) return Result::Done(err);
  f.post_syncpt_id = head_.flip_syncpoint();
  f.post_syncpt_val = post;
  return Result::Done(NvError::kSuccess);
}

}  // namespace nvsentry::hostshim::sim
