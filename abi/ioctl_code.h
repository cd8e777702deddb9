// The nvdrv ioctl number layout (the Linux _IOC layout): nr 7:0, magic 15:8, size 29:16,
// direction 31:30 where bit 30 means the caller passes data in and bit 31 that it reads data out.
#pragma once

#include <cstdint>

namespace nvsentry::abi {

enum class Dir : uint8_t { kNone = 0, kIn = 1, kOut = 2, kInOut = 3 };

constexpr uint32_t kIocSizeMask = 0x3FFFu << 16;
constexpr uint32_t kIocDirMask = 3u << 30;

constexpr uint32_t IocNr(uint32_t code) { return code & 0xFF; }
constexpr uint32_t IocMagic(uint32_t code) { return (code >> 8) & 0xFF; }
constexpr uint32_t IocSize(uint32_t code) { return (code >> 16) & 0x3FFF; }
constexpr Dir IocDir(uint32_t code) { return static_cast<Dir>(code >> 30); }
constexpr bool DirHasIn(Dir d) { return (static_cast<uint8_t>(d) & 1) != 0; }
constexpr bool DirHasOut(Dir d) { return (static_cast<uint8_t>(d) & 2) != 0; }

constexpr uint32_t IocCode(Dir dir, uint32_t magic, uint32_t nr, uint32_t size) {
  return (static_cast<uint32_t>(dir) << 30) | ((size & 0x3FFF) << 16) | ((magic & 0xFF) << 8) |
         (nr & 0xFF);
}

const char* DirName(Dir d);

}  // namespace nvsentry::abi
