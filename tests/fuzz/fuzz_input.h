// The byte formats of the fuzz targets' inputs, shared by the targets (which decode them), the seed
// writer (which encodes one input per catalogue ioctl) and the replay driver. See docs/fuzzing.md.
//
// engine_fuzz input:
//   header   u8 device       index into abi::Devices() (modulo)
//            u8 flags        kFlag* below
//            u8 firmware     index into kFirmwares (modulo)
//            u8 calls        1 + calls % kMaxCalls calls on the same session
//            u8 prelude_dev  /dev/nvdrv only: the device the prelude opens as nvdrv fd 1
//   per call u8 via          abi::Via (modulo 4)
//            u8 backend      kBackend* in bits 0-1; bits 2-7 seed the fake backend's pattern
//            Selector        which code (below)
//            u8 bufmode      kBuf* below
//            [kBufCustom]    u16 in_size, u16 out_size (else both are the code's size)
//            u16 in2_size, u16 out2_size (used by Ioctl2 / Ioctl3)
//            [kBufShort]     u8 short: bits 0-1 which buffer is mapped short, bits 2-7 + 1 bytes
//            bytes           the main buffer's contents (the code's size), then the in2 buffer's
//            [nested]        /dev/nvdrv Ioctl/Ioctl2/Ioctl3 with kBufFixup: the command struct is
//                            pointed at harness buffers and the carried call follows as
//                            Selector, bufmode, sizes... bytes, exactly like a call.
//   Selector u8 kind         < kRawCodeKind: a catalogue ioctl, u16 index into dev.ioctls (modulo)
//                            and u16 size (variable ioctls: the code's size bits; else unused);
//                            otherwise u32 raw code.
// Missing bytes read as zero, so every input is valid.
//
// decode_fuzz input:
//   u8 device, u16 ioctl index, u8 via, u8 show, u8 format, u8 flags (bit 0: pass explicit
//   BufferSizes, bit 1: DecodeText/DecodeJson of the fields only), u16 main_len, u16 in2_len,
//   u16 out2_len, u32 size_main, u32 size_in2, u32 size_out2, then the bytes of main, in2, out2.
//
// xlate_fuzz input:
//   header   u8 flags        kXlate* below
//   then up to kXlateMaxOps operations, each u8 op (modulo 6: kOp* below, 3..5 a call):
//   open     u8 slot, u8 device (nvmap, nvhost-ctrl, -ctrl-gpu, -as-gpu, -gpu; modulo 5)
//   close    u8 slot
//   memory   u16 word offset into the guest's memory, u8 words (modulo 65), the words
//   call     u8 slot, u16 ioctl index into the slot's device (modulo), u16 bytes past the fixed
//            part (variable ioctls; modulo 2048, whole 8 bytes), u8 patches (modulo 6), each
//            {u16 offset, u8 kind, u8 a, u8 b}, then the argument's bytes (none when the slot
//            has no session).
//   A patch's kind: bits 0-1 kPatch*, bit 2 eight bytes instead of four, bits 4-7 which earlier
//   call (1 + n back) for kPatchEarlier and kPatchEntry.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "abi/firmware.h"

namespace nvsentry::fuzz {

constexpr uint8_t kFlagGone = 1u << 0;       // the guest thread is gone (StillValid false)
constexpr uint8_t kFlagTrace = 1u << 1;      // trace every call (text) to /dev/null
constexpr uint8_t kFlagTraceJson = 1u << 2;  // ... as JSON
constexpr uint8_t kFlagDebug = 1u << 3;      // GuestConfig::debug_mode
constexpr uint8_t kFlagPrelude = 1u << 4;  // /dev/nvdrv: Initialize, then Open prelude_dev as fd 1
constexpr uint8_t kFlagNoPerms = 1u << 5;  // permission mask 0 instead of every bit

constexpr int kMaxCalls = 4;

enum BackendMode : uint8_t {
  kBackendSim = 0,      // forward to the simulated GPU
  kBackendSim2 = 1,     // same (keeps the simulated GPU the common case)
  kBackendSuccess = 2,  // scribble a pattern over arg and out2, answer Success
  kBackendError = 3,    // scribble, answer BadParameter (nothing may be written back)
};

constexpr uint8_t kBufCustom = 1u << 0;  // in_size / out_size from the input
constexpr uint8_t kBufShort = 1u << 1;   // map one buffer shorter than declared
constexpr uint8_t kBufFixup = 1u << 2;   // /dev/nvdrv Ioctl*: point the command at a carried call

constexpr uint8_t kRawCodeKind = 0xF0;

inline constexpr abi::Firmware kFirmwares[] = {
    abi::kLatestFirmware, abi::Fw(1, 0, 0),  abi::Fw(3, 0, 0),  abi::Fw(6, 1, 0),
    abi::Fw(8, 0, 0),     abi::Fw(11, 0, 0), abi::Fw(15, 0, 0),
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}
  uint8_t U8() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() | (U8() << 8)); }
  uint32_t U32() { return U16() | (static_cast<uint32_t>(U16()) << 16); }
  // n bytes, zero-filled past the end of the input.
  void Bytes(std::span<uint8_t> out) {
    if (out.empty()) return;
    size_t n = std::min(out.size(), data_.size() - pos_);
    if (n > 0) std::memcpy(out.data(), data_.data() + pos_, n);
    std::memset(out.data() + n, 0, out.size() - n);
    pos_ += n;
  }
  std::span<const uint8_t> Rest() const { return data_.subspan(pos_); }

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

class Writer {
 public:
  void U8(uint8_t v) { out.push_back(v); }
  void U16(uint16_t v) { U8(v & 0xFF), U8(v >> 8); }
  void U32(uint32_t v) { U16(v & 0xFFFF), U16(v >> 16); }
  void Bytes(std::span<const uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); }
  std::vector<uint8_t> out;
};

constexpr uint8_t kXlateOnly3d = 1u << 0;  // the stream policy binds the 3D class only
constexpr uint8_t kXlateTrace = 1u << 1;   // host calls traced (to nowhere)
constexpr int kXlateSlots = 8;
constexpr int32_t kXlateFirstFd = 100;  // the guest's fd of slot 0
constexpr int kXlateMaxOps = 48;
constexpr size_t kXlateGuestMemory = 256 * 1024;
enum XlateOp : uint8_t { kOpOpen = 0, kOpClose = 1, kOpMemory = 2, kOpCall = 3 };
enum XlatePatch : uint8_t {
  kPatchEarlier = 0,       // bytes an earlier call left at offset b of its argument
  kPatchFd = 1,            // the guest fd of slot a
  kPatchGuestAddress = 2,  // the guest memory's address plus ((a << 8 | b) * 16)
  kPatchEntry = 3,         // a GPFIFO entry of a words at the VA at offset b of an earlier call
};

// Seeds, one per catalogue ioctl (and its Ioctl2/Ioctl3 and /dev/nvdrv-carried forms).
std::vector<std::vector<uint8_t>> EngineSeeds();
std::vector<std::vector<uint8_t>> DecodeSeeds();
// host1x_fuzz: class, flags, buffers, owned syncpoints, budget, command buffers, relocations,
// then the command words (host1x_fuzz.cc reads them in that order).
std::vector<std::vector<uint8_t>> Host1xSeeds();
// xlate_fuzz: each device opened and every ioctl of it called once with zeroes, and the way a
// client sets up and feeds a channel (nvmap object over guest memory, address space, mapping,
// channel, pushbuffer words, submission), with and without the 3D-only policy.
std::vector<std::vector<uint8_t>> XlateSeeds();

}  // namespace nvsentry::fuzz
