// xlate_fuzz's seeds (fuzz_input.h, "xlate_fuzz input"), made from the catalogue's codes.
#include <cstring>
#include <initializer_list>

#include "abi/catalogue.h"
#include "abi/devices/channel.h"
#include "abi/devices/nvhost_as_gpu.h"
#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvmap.h"
#include "tests/fuzz/fuzz_input.h"

namespace nvsentry::fuzz {
namespace {

namespace ch = abi::channel;
namespace as = abi::nvhost_as_gpu;
namespace nvmap = abi::nvmap;
namespace ctrl = abi::nvhost_ctrl;

// Device numbers of the input (xlate_fuzz.cc's kGuestDevices).
constexpr uint8_t kNvmapDev = 0, kCtrlDev = 1, kCtrlGpuDev = 2, kAsDev = 3, kGpuDev = 4;
constexpr abi::DeviceId kIds[] = {abi::DeviceId::kNvmap, abi::DeviceId::kNvhostCtrl,
                                  abi::DeviceId::kNvhostCtrlGpu, abi::DeviceId::kNvhostAsGpu,
                                  abi::DeviceId::kNvhostGpu};
// The slots the channel seed uses.
constexpr uint8_t kNvmapSlot = 0, kAsSlot = 1, kGpuSlot = 2, kCtrlSlot = 3, kCtrlGpuSlot = 4;

uint16_t IndexOf(uint8_t dev, uint32_t code) {
  const abi::DeviceDesc& d = abi::Device(kIds[dev]);
  for (size_t i = 0; i < d.ioctls.size(); ++i)
    if (d.ioctls[i].Matches(code)) return static_cast<uint16_t>(i);
  return 0;
}

struct PatchSpec {
  uint16_t at;
  uint8_t kind, a, b;
};

void Open(Writer& w, uint8_t slot, uint8_t dev) {
  w.U8(kOpOpen);
  w.U8(slot);
  w.U8(dev);
}

template <typename T>
void CallWith(Writer& w, uint8_t slot, uint8_t dev, uint32_t code, const T& arg,
              std::initializer_list<PatchSpec> patches = {}, uint16_t extra = 0) {
  w.U8(kOpCall);
  w.U8(slot);
  w.U16(IndexOf(dev, code));
  w.U16(extra);
  w.U8(static_cast<uint8_t>(patches.size()));
  for (const PatchSpec& p : patches) {
    w.U16(p.at);
    w.U8(p.kind);
    w.U8(p.a);
    w.U8(p.b);
  }
  w.Bytes({reinterpret_cast<const uint8_t*>(&arg), sizeof arg});
}

uint8_t Back(uint8_t kind, int back) { return static_cast<uint8_t>(kind | ((back - 1) << 4)); }

// A client's channel: an nvmap object over guest memory, an address space with `big_page`
// pages, the object mapped, a channel bound to it, a GPFIFO and the 3D object. Eight calls.
void SetUpChannel(Writer& w, uint32_t big_page) {
  Open(w, kNvmapSlot, kNvmapDev);
  Open(w, kAsSlot, kAsDev);
  Open(w, kGpuSlot, kGpuDev);
  Open(w, kCtrlSlot, kCtrlDev);
  Open(w, kCtrlGpuSlot, kCtrlGpuDev);
  CallWith(w, kNvmapSlot, kNvmapDev, nvmap::kCreate, nvmap::Create{0x10000, 0});  // 1
  nvmap::Alloc alloc{};
  alloc.align = 0x1000;
  CallWith(w, kNvmapSlot, kNvmapDev, nvmap::kAlloc, alloc,
           {{0, Back(kPatchEarlier, 1), 0, 4}, {24, kPatchGuestAddress | 4, 0, 0}});  // 2
  CallWith(w, kAsSlot, kAsDev, as::kAllocAs, as::AllocAs{big_page, 0, 0});            // 3
  as::MapBufferEx map{};
  map.kind = 0xFFFFFFFFu;
  CallWith(w, kAsSlot, kAsDev, as::kMapBufferEx, map, {{8, Back(kPatchEarlier, 3), 0, 4}});  // 4
  CallWith(w, kAsSlot, kAsDev, as::kBindChannel, as::BindChannel{0},
           {{0, kPatchFd, kGpuSlot, 0}});  // 5
  CallWith(w, kGpuSlot, kGpuDev, ch::kSetNvmapFd, ch::U32Arg{0},
           {{0, kPatchFd, kNvmapSlot, 0}});  // 6
  ch::AllocGpfifoEx gpfifo{};
  gpfifo.num_entries = 32;
  CallWith(w, kGpuSlot, kGpuDev, ch::kAllocGpfifoEx2, gpfifo);                      // 7
  CallWith(w, kGpuSlot, kGpuDev, ch::kAllocObjCtx, ch::AllocObjCtx{0xB197, 0, 0});  // 8
}

// `words` at the start of the object, submitted as one entry (the mapping is 4 + `calls_since_map`
// calls back), the fence asked for; then SYNCPT_INCR and a WAITEX on the fence's syncpoint.
void Submit(Writer& w, std::initializer_list<uint32_t> words, int back_to_map) {
  w.U8(kOpMemory);
  w.U16(0);
  w.U8(static_cast<uint8_t>(words.size()));
  for (uint32_t v : words) w.U32(v);
  struct {
    ch::SubmitGpfifoHeader h;
    ch::GpfifoEntry e;
  } submit{};
  submit.h.num_entries = 1;
  submit.h.flags = ch::kFenceGet;
  CallWith(w, kGpuSlot, kGpuDev, ch::kSubmitGpfifo, submit,
           {{24, Back(kPatchEntry, back_to_map), static_cast<uint8_t>(words.size()), 32}}, 8);
  CallWith(w, kCtrlSlot, kCtrlDev, ctrl::kSyncptIncr, ctrl::SyncptIncr{0},
           {{0, Back(kPatchEarlier, 1), 0, 16}});
  CallWith(w, kCtrlSlot, kCtrlDev, ctrl::kSyncptWaitEx, ctrl::SyncptWaitEx{0, 0, 10, 0},
           {{0, Back(kPatchEarlier, 2), 0, 16}, {4, Back(kPatchEarlier, 2), 0, 20}});
}

constexpr uint32_t kSetObject3d[] = {0x20010000, 0xB197};   // SET_OBJECT 3D on subchannel 0
constexpr uint32_t kSetObjectDma[] = {0x20010000, 0xB0B5};  // the copy engine's class

}  // namespace

std::vector<std::vector<uint8_t>> XlateSeeds() {
  std::vector<std::vector<uint8_t>> seeds;
  // Every ioctl of every device, alone on a fresh session, zeroes.
  for (uint8_t dev = 0; dev < std::size(kIds); ++dev) {
    const abi::DeviceDesc& d = abi::Device(kIds[dev]);
    for (size_t i = 0; i < d.ioctls.size(); ++i) {
      Writer w;
      w.U8(0);
      Open(w, 0, dev);
      w.U8(kOpCall);
      w.U8(0);
      w.U16(static_cast<uint16_t>(i));
      w.U16(d.ioctls[i].variable() ? 8 : 0);
      w.U8(0);
      std::vector<uint8_t> zeroes(d.ioctls[i].fixed_size() + (d.ioctls[i].variable() ? 8 : 0));
      w.Bytes(zeroes);
      seeds.push_back(std::move(w.out));
    }
  }
  // A channel set up and fed, under both policies and both big page sizes; the DMA class bound
  // (refused under the 3D-only policy).
  for (uint8_t flags : {uint8_t{0}, kXlateOnly3d, kXlateTrace})
    for (uint32_t big_page : {0x10000u, 0x20000u})
      for (const auto* words : {kSetObject3d, kSetObjectDma}) {
        Writer w;
        w.U8(flags);
        SetUpChannel(w, big_page);
        Submit(w, {words[0], words[1]}, 5);
        seeds.push_back(std::move(w.out));
      }
  // A host-method increment of syncpoint 1 (the first channel's on the fake) after the first
  // submission told the guest its syncpoint, and one of syncpoint 2.
  for (uint32_t id : {1u, 2u}) {
    Writer w;
    w.U8(0);
    SetUpChannel(w, 0x20000);
    Submit(w, {kSetObject3d[0], kSetObject3d[1]}, 5);
    Submit(w, {0x2001001D /* SYNCPOINTB */, (id << 8) | 1 /* INCR */}, 8);
    seeds.push_back(std::move(w.out));
  }
  // After the set-up and a submission, every ioctl of the other four devices once, zeroes, then
  // another submission; and a reset channel's old syncpoint incremented (it is no longer the
  // guest's: the host may have given it to another client).
  for (uint8_t dev : {kAsDev, kGpuDev, kCtrlDev, kCtrlGpuDev}) {
    const abi::DeviceDesc& d = abi::Device(kIds[dev]);
    const uint8_t slot = dev == kAsDev     ? kAsSlot
                         : dev == kGpuDev  ? kGpuSlot
                         : dev == kCtrlDev ? kCtrlSlot
                                           : kCtrlGpuSlot;
    for (size_t i = 0; i < d.ioctls.size(); ++i) {
      Writer w;
      w.U8(0);
      SetUpChannel(w, 0x20000);
      Submit(w, {kSetObject3d[0], kSetObject3d[1]}, 5);
      w.U8(kOpCall);
      w.U8(slot);
      w.U16(static_cast<uint16_t>(i));
      w.U16(d.ioctls[i].variable() ? 8 : 0);
      w.U8(0);
      std::vector<uint8_t> zeroes(d.ioctls[i].fixed_size() + (d.ioctls[i].variable() ? 8 : 0));
      w.Bytes(zeroes);
      Submit(w, {kSetObject3d[0], kSetObject3d[1]}, 9);
      seeds.push_back(std::move(w.out));
    }
  }
  Writer w;
  w.U8(0);
  SetUpChannel(w, 0x20000);
  Submit(w, {kSetObject3d[0], kSetObject3d[1]}, 5);
  w.U8(kOpCall);  // FORCE_RESET: no argument
  w.U8(kGpuSlot);
  w.U16(IndexOf(kGpuDev, ch::kForceReset));
  w.U16(0);
  w.U8(0);
  CallWith(w, kCtrlSlot, kCtrlDev, ctrl::kSyncptIncr, ctrl::SyncptIncr{0},
           {{0, Back(kPatchEarlier, 4), 0, 16}});
  seeds.push_back(std::move(w.out));
  return seeds;
}

}  // namespace nvsentry::fuzz
