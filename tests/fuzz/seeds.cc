// Seed inputs for the fuzz targets, made from the catalogue at run time (no binary corpus in the
// tree): for every ioctl of every device, a well-formed call with zeroed fields and, for variable
// ioctls, one with one element per array, directly, through Ioctl2/Ioctl3 when it has them, and
// carried by a /dev/nvdrv Ioctl command.
#include <algorithm>
#include <cstring>
#include <optional>

#include "abi/catalogue.h"
#include "abi/devices/nvdrv.h"
#include "abi/devices/nvhost_ctrl.h"
#include "tests/fuzz/fuzz_input.h"

namespace nvsentry::fuzz {
namespace {

using abi::Via;

// A plausible call: code with its size, main buffer bytes, in2 bytes, out2 size.
struct Plausible {
  uint32_t code;
  std::vector<uint8_t> main, in2;
  uint32_t out2_size = 0;
};

std::optional<Plausible> MakeCall(const abi::IoctlDesc& d, Via via, bool one_each) {
  Plausible p;
  if (!d.variable()) {
    p.code = d.code;
    p.main.assign(d.size(), 0);
    return p;
  }
  std::vector<uint8_t> header(d.fixed_size(), 0);
  uint64_t main_bytes = 0, in2_bytes = 0, out2_bytes = 0;
  for (const abi::ArrayDesc& a : d.arrays) {
    const bool carried = a.buffer == abi::Buffer::kMain ||
                         (a.buffer == abi::Buffer::kIn2 && via == Via::kIoctl2) ||
                         (a.buffer == abi::Buffer::kOut2 && via == Via::kIoctl3);
    uint64_t count = 0;
    if (carried) {
      switch (a.count_from) {
        case abi::CountFrom::kField:
          count = one_each ? 1 : 0;
          if (a.count + 4u <= header.size()) {
            uint32_t c = static_cast<uint32_t>(count);
            std::memcpy(header.data() + a.count, &c, 4);
          }
          break;
        case abi::CountFrom::kFixed: count = a.count; break;
        case abi::CountFrom::kRest: count = one_each ? 1 : 0; break;
      }
    }
    const uint64_t bytes = count * a.elem->size;
    if (a.buffer == abi::Buffer::kMain) main_bytes += bytes;
    if (a.buffer == abi::Buffer::kIn2) in2_bytes += bytes;
    if (a.buffer == abi::Buffer::kOut2) out2_bytes += bytes;
  }
  const uint64_t size = header.size() + main_bytes;
  if (size > 0x3FFF || in2_bytes > 0xFFFF || out2_bytes > 0xFFFF) return std::nullopt;
  p.code = d.code | static_cast<uint32_t>(size << 16);
  p.main = header;
  p.main.resize(size, 0);
  p.in2.assign(in2_bytes, 0);
  p.out2_size = static_cast<uint32_t>(out2_bytes);
  return p;
}

std::optional<uint8_t> FirmwareIndex(const abi::DeviceDesc& dev, const abi::IoctlDesc& d) {
  for (size_t i = 0; i < std::size(kFirmwares); ++i)
    if (dev.fw.Contains(kFirmwares[i]) && d.fw.Contains(kFirmwares[i]))
      return static_cast<uint8_t>(i);
  return std::nullopt;
}

// Selector + bufmode + sizes + bytes of one call.
void PutCall(Writer& w, uint16_t index, const Plausible& p, Via via, uint8_t bufmode) {
  w.U8(0);  // catalogue selector
  w.U16(index);
  w.U16(static_cast<uint16_t>(abi::IocSize(p.code)));
  w.U8(bufmode);
  w.U16(via == Via::kIoctl2 ? static_cast<uint16_t>(p.in2.size()) : 0);
  w.U16(via == Via::kIoctl3 ? static_cast<uint16_t>(p.out2_size) : 0);
  w.Bytes(p.main);
  if (via == Via::kIoctl2) w.Bytes(p.in2);
}

}  // namespace

std::vector<std::vector<uint8_t>> EngineSeeds() {
  std::vector<std::vector<uint8_t>> seeds;
  const auto devices = abi::Devices();
  uint8_t nvdrv_index = 0;
  const abi::DeviceDesc* nvdrv = nullptr;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].id == abi::DeviceId::kNvdrv)
      nvdrv_index = static_cast<uint8_t>(i), nvdrv = &devices[i];
  auto command_index = [&](uint32_t code) -> std::optional<uint16_t> {
    if (nvdrv == nullptr) return std::nullopt;
    for (size_t i = 0; i < nvdrv->ioctls.size(); ++i)
      if (nvdrv->ioctls[i].code == code) return static_cast<uint16_t>(i);
    return std::nullopt;
  };

  for (size_t di = 0; di < devices.size(); ++di) {
    const abi::DeviceDesc& dev = devices[di];
    for (size_t ii = 0; ii < dev.ioctls.size(); ++ii) {
      const abi::IoctlDesc& d = dev.ioctls[ii];
      std::optional<uint8_t> fw = FirmwareIndex(dev, d);
      if (!fw) continue;
      std::vector<Via> vias = {Via::kDirect};
      if (d.flags & abi::kUsesIoctl2) vias.push_back(Via::kIoctl2);
      if (d.flags & abi::kUsesIoctl3) vias.push_back(Via::kIoctl3);
      for (Via via : vias) {
        for (bool one_each : {false, true}) {
          if (one_each && !d.variable()) continue;
          std::optional<Plausible> p = MakeCall(d, via, one_each);
          if (!p) continue;
          // Directly on the device (the fake backend answers Success so outputs are written back).
          Writer w;
          w.U8(static_cast<uint8_t>(di));
          w.U8(0);
          w.U8(*fw);
          w.U8(0);  // one call
          w.U8(0);
          w.U8(static_cast<uint8_t>(via));
          w.U8(kBackendSuccess | (static_cast<uint8_t>(ii) << 2));
          PutCall(w, static_cast<uint16_t>(ii), *p, via, 0);
          seeds.push_back(std::move(w.out));

          // Carried by /dev/nvdrv: Initialize, Open the device, then Ioctl/Ioctl2/Ioctl3.
          if (dev.id == abi::DeviceId::kNvdrv) continue;
          const uint32_t command = via == Via::kIoctl2   ? abi::nvdrv::kIoctl2
                                   : via == Via::kIoctl3 ? abi::nvdrv::kIoctl3
                                                         : abi::nvdrv::kIoctl;
          std::optional<uint16_t> ci = command_index(command);
          if (!ci) continue;
          const Via carried = via == Via::kDirect ? Via::kIoctl : via;
          std::optional<Plausible> q = MakeCall(d, carried, one_each);
          if (!q) continue;
          Writer n;
          n.U8(nvdrv_index);
          n.U8(kFlagPrelude | kFlagDebug);
          n.U8(*fw);
          n.U8(0);
          n.U8(static_cast<uint8_t>(di));
          n.U8(static_cast<uint8_t>(Via::kDirect));
          n.U8(kBackendSim);
          Plausible cmd{command, std::vector<uint8_t>(abi::IocSize(command), 0), {}, 0};
          PutCall(n, *ci, cmd, Via::kDirect, kBufFixup);
          PutCall(n, static_cast<uint16_t>(ii), *q, carried, 0);
          seeds.push_back(std::move(n.out));
        }
      }
    }
  }
  // The clients' direction variants (catalogue aliases) as raw codes, directly and carried by
  // an nvdrv Ioctl whose buffers follow the variant's own direction.
  for (size_t di = 0; di < devices.size(); ++di) {
    const abi::DeviceDesc& dev = devices[di];
    for (const abi::IoctlDesc& d : dev.ioctls) {
      for (const abi::CodeAlias& a : d.aliases) {
        std::optional<uint8_t> fw = FirmwareIndex(dev, d);
        if (!fw) continue;
        auto raw_call = [&](Writer& w, uint8_t bufmode) {
          w.U8(kRawCodeKind);
          w.U32(a.code);
          w.U8(bufmode);
          if (bufmode & kBufCustom) {  // in and out sizes as the variant's direction passes them
            const abi::Dir dir = abi::IocDir(a.code);
            w.U16(abi::DirHasIn(dir) ? static_cast<uint16_t>(d.size()) : 0);
            w.U16(abi::DirHasOut(dir) ? static_cast<uint16_t>(d.size()) : 0);
          }
          w.U16(0);
          w.U16(0);
          w.Bytes(std::vector<uint8_t>(d.size(), 0));
        };
        Writer w;
        w.U8(static_cast<uint8_t>(di)), w.U8(0), w.U8(*fw), w.U8(0), w.U8(0);
        w.U8(static_cast<uint8_t>(Via::kDirect)), w.U8(kBackendSim);
        raw_call(w, 0);
        seeds.push_back(std::move(w.out));
        std::optional<uint16_t> ci = command_index(abi::nvdrv::kIoctl);
        if (!ci) continue;
        Writer n;
        n.U8(nvdrv_index), n.U8(kFlagPrelude | kFlagDebug), n.U8(*fw), n.U8(0);
        n.U8(static_cast<uint8_t>(di));
        n.U8(static_cast<uint8_t>(Via::kDirect)), n.U8(kBackendSim);
        Plausible cmd{
            abi::nvdrv::kIoctl, std::vector<uint8_t>(abi::IocSize(abi::nvdrv::kIoctl), 0), {}, 0};
        PutCall(n, *ci, cmd, Via::kDirect, kBufFixup);
        raw_call(n, kBufCustom);
        seeds.push_back(std::move(n.out));
      }
    }
  }
  // A wait that parks, then the increment that finishes it (the continuation path).
  for (size_t di = 0; di < devices.size(); ++di) {
    const abi::DeviceDesc& dev = devices[di];
    if (dev.id != abi::DeviceId::kNvhostCtrl) continue;
    std::optional<uint16_t> wait, incr;
    for (size_t i = 0; i < dev.ioctls.size(); ++i) {
      if (dev.ioctls[i].code == abi::nvhost_ctrl::kSyncptWaitEx) wait = static_cast<uint16_t>(i);
      if (dev.ioctls[i].code == abi::nvhost_ctrl::kSyncptIncr) incr = static_cast<uint16_t>(i);
    }
    if (!wait || !incr) break;
    Writer w;
    w.U8(static_cast<uint8_t>(di)), w.U8(0), w.U8(0), w.U8(1), w.U8(0);  // two calls
    abi::nvhost_ctrl::SyncptWaitEx we{3, 1, -1, 0};
    Plausible pw{abi::nvhost_ctrl::kSyncptWaitEx, std::vector<uint8_t>(sizeof we), {}, 0};
    std::memcpy(pw.main.data(), &we, sizeof we);
    w.U8(static_cast<uint8_t>(Via::kDirect)), w.U8(kBackendSim);
    PutCall(w, *wait, pw, Via::kDirect, 0);
    abi::nvhost_ctrl::SyncptIncr inc{3};
    Plausible pi{abi::nvhost_ctrl::kSyncptIncr, std::vector<uint8_t>(sizeof inc), {}, 0};
    std::memcpy(pi.main.data(), &inc, sizeof inc);
    w.U8(static_cast<uint8_t>(Via::kDirect)), w.U8(kBackendSim);
    PutCall(w, *incr, pi, Via::kDirect, 0);
    seeds.push_back(std::move(w.out));
  }
  return seeds;
}

std::vector<std::vector<uint8_t>> DecodeSeeds() {
  std::vector<std::vector<uint8_t>> seeds;
  const auto devices = abi::Devices();
  for (size_t di = 0; di < devices.size(); ++di) {
    const abi::DeviceDesc& dev = devices[di];
    for (size_t ii = 0; ii < dev.ioctls.size(); ++ii) {
      const abi::IoctlDesc& d = dev.ioctls[ii];
      Via via = (d.flags & abi::kUsesIoctl2)   ? Via::kIoctl2
                : (d.flags & abi::kUsesIoctl3) ? Via::kIoctl3
                                               : Via::kDirect;
      std::optional<Plausible> p = MakeCall(d, via, true);
      if (!p) continue;
      for (uint8_t format : {0, 1}) {
        Writer w;
        w.U8(static_cast<uint8_t>(di));
        w.U16(static_cast<uint16_t>(ii));
        w.U8(static_cast<uint8_t>(via));
        w.U8(2);  // Show::kAll
        w.U8(format);
        w.U8(0);
        w.U16(static_cast<uint16_t>(p->main.size()));
        w.U16(static_cast<uint16_t>(p->in2.size()));
        w.U16(static_cast<uint16_t>(p->out2_size));
        w.U32(0), w.U32(0), w.U32(0);
        w.Bytes(p->main);
        w.Bytes(p->in2);
        w.Bytes(std::vector<uint8_t>(p->out2_size, 0));
        seeds.push_back(std::move(w.out));
      }
    }
  }
  return seeds;
}

}  // namespace nvsentry::fuzz
