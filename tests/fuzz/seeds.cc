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

namespace {

// host1x opcodes (Linux drivers/gpu/host1x/hw/host1x05_hardware.h), for the seeds.
constexpr uint32_t H1SetClass(uint32_t cls, uint32_t offset = 0, uint32_t mask = 0) {
  return (offset << 16) | (cls << 6) | mask;
}
constexpr uint32_t H1Incr(uint32_t offset, uint32_t count) {
  return (1u << 28) | (offset << 16) | count;
}
constexpr uint32_t H1NonIncr(uint32_t offset, uint32_t count) {
  return (2u << 28) | (offset << 16) | count;
}
constexpr uint32_t H1Mask(uint32_t offset, uint32_t mask) {
  return (3u << 28) | (offset << 16) | mask;
}
constexpr uint32_t H1Imm(uint32_t offset, uint32_t value) {
  return (4u << 28) | (offset << 16) | value;
}
constexpr uint32_t H1Gather(uint32_t count, uint32_t offset = 0, bool insert = false,
                            bool incr = false) {
  return (6u << 28) | (offset << 16) | (insert ? 1u << 15 : 0) | (incr ? 1u << 14 : 0) | count;
}
constexpr uint32_t H1Extend(uint32_t subop, uint32_t id) {
  return (14u << 28) | (subop << 24) | id;
}

struct Host1xSeed {
  uint8_t cls;
  uint8_t flags;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> buffers;
  uint8_t owned0, owned1;
  uint16_t budget;
  uint8_t ncmdbufs;
  std::vector<std::pair<uint16_t, uint32_t>> relocs;  // word, address (shift 8)
  std::vector<uint32_t> words;
};

std::vector<uint8_t> Encode(const Host1xSeed& s) {
  Writer w;
  w.U8(s.cls);
  w.U8(s.flags);
  w.U8(static_cast<uint8_t>(s.buffers.size()));
  for (const auto& [addr, words] : s.buffers) {
    w.U32(addr);
    w.U8(static_cast<uint8_t>(words.size()));
    for (uint32_t x : words) w.U32(x);
  }
  w.U8(s.owned0), w.U32(0), w.U8(s.owned1), w.U32(0xFFFFFFF0);
  w.U16(s.budget);
  w.U8(s.ncmdbufs);
  w.U8(static_cast<uint8_t>(s.relocs.size()));
  for (const auto& [word, addr] : s.relocs) w.U16(word), w.U32(addr), w.U8(8);
  for (uint32_t x : s.words) w.U32(x);
  return w.out;
}

}  // namespace

std::vector<std::vector<uint8_t>> Host1xSeeds() {
  constexpr uint8_t kVic = 0, kNvdec = 1;
  const uint32_t method0 = 0x10, method1 = 0x11;
  std::vector<Host1xSeed> s;
  // VIC the usual way: methods through METHOD0/METHOD1 (one address relocated), the engine's
  // INCR_SYNCPT, then a 32-bit wait on it.
  s.push_back({kVic,
               0,
               {},
               12,
               13,
               0xFFFF,
               1,
               {{6, 0x123400}},
               {H1SetClass(0x5D), H1Incr(method0, 2), 0x200 / 4, 0, H1Incr(method0, 2), 0x708 / 4,
                0, H1Imm(method0, 0x300 / 4), H1Imm(method1, 1), H1Imm(0, 0x10C), H1SetClass(1),
                H1Imm(0x4e, 0), H1Imm(0x4e, 1), H1Imm(0x50, 12)}});
  // NVDEC: a gather with insert writes METHOD0/METHOD1 pairs; a plain gather of opcodes.
  s.push_back({kNvdec,
               2,
               {{0x10000, {0x400 / 4, 3, 0x430 / 4, 7}}, {0x20000, {H1Imm(0, 13)}}},
               13,
               54,
               7,
               2,
               {},
               {H1SetClass(0xF0), H1Gather(4, method0, true, true), 0x10000, H1Gather(1), 0x20000,
                H1Mask(method0, 0b11), 0x300 / 4, 0}});
  // host1x class: wait bases (load, increment, wait relative to them), a 24-bit wait, masks,
  // module locks, a non-incrementing write and a RESTART that stops the stream.
  s.push_back(
      {kVic,
       3,
       {},
       5,
       6,
       3,
       3,
       {},
       {H1SetClass(1, 0x0b, 0b1), (3u << 24) | 10, H1Imm(0x0c, 0), H1Incr(0x0c, 1), (3u << 24) | 2,
        H1NonIncr(0, 2), 5, 5, H1Imm(0x08, (5u << 8) >> 8), (5u << 24) | 2, H1Extend(0, 3),
        H1Extend(1, 3), H1Incr(0x09, 1), (6u << 24) | (3u << 16) | 1, H1Imm(0x09, 0), (5u << 28)}});
  // Errors: unknown opcode, another class, a gather outside every buffer, a nested gather.
  s.push_back({kVic, 0, {}, 1, 2, 100, 1, {}, {H1SetClass(0x30)}});
  s.push_back({kVic, 0, {}, 1, 2, 100, 1, {}, {0xF0000000}});
  s.push_back({kVic,
               0,
               {{0x30000, {H1Gather(1), 0x30000}}},
               1,
               2,
               100,
               1,
               {},
               {H1Gather(2), 0x30000, H1Gather(5), 0x40000}});
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < s.size(); ++i) {
    out.push_back(Encode(s[i]));
    // And each on the other engines.
    for (uint8_t cls = 1; cls < 5; ++cls) {
      Host1xSeed t = s[i];
      t.cls = static_cast<uint8_t>((t.cls + cls) % 5);
      out.push_back(Encode(t));
    }
  }
  return out;
}

}  // namespace nvsentry::fuzz
