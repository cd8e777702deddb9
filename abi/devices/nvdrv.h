// /dev/nvdrv: the nvdrv service commands of Switchbrew that are not plain device ioctls, as ioctls
// on one node (magic 'n', nr = the command id). Each command's struct ends in an `error` word
// that carries the command's NvError; the ioctl itself fails only when the command struct cannot
// be read or written (EFAULT) or is malformed. nvdrv fds are small integers private to one open
// of /dev/nvdrv (one service session), like the fds of the real service.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvdrv {

constexpr uint8_t kMagic = 'n';

constexpr uint32_t kOpen = 0xC1086E00;
constexpr uint32_t kIoctl = 0xC0306E01;
constexpr uint32_t kClose = 0xC0086E02;
constexpr uint32_t kInitialize = 0xC0106E03;
constexpr uint32_t kQueryEvent = 0xC0186E04;
constexpr uint32_t kMapSharedMem = 0xC0186E05;
constexpr uint32_t kGetStatus = 0xC0286E06;
constexpr uint32_t kSetAruidWithoutCheck = 0xC0106E07;
constexpr uint32_t kSetAruid = 0xC0106E08;
constexpr uint32_t kDumpStatus = 0x00006E09;
constexpr uint32_t kInitializeDevtools = 0xC0106E0A;
constexpr uint32_t kIoctl2 = 0xC0406E0B;
constexpr uint32_t kIoctl3 = 0xC0406E0C;
constexpr uint32_t kSetGraphicsFirmwareMemoryMarginEnabled = 0xC0106E0D;

constexpr uint32_t kPathMax = 0x100;

struct Open {
  char path[kPathMax];  // NUL-terminated device path, e.g. "/dev/nvhost-ctrl"
  uint32_t fd;          // out
  uint32_t error;       // out: NvError
};
struct Ioctl {
  uint32_t fd;
  uint32_t code;
  uint64_t in, in_size;    // the input buffer (used when the code has the "in" direction)
  uint64_t out, out_size;  // the output buffer (used when the code has the "out" direction)
  uint32_t error;          // out
  uint32_t reserved;
};
struct Close {
  uint32_t fd;
  uint32_t error;
};
struct Initialize {
  uint64_t transfer_memory;  // guest address of the transfer memory (recorded, not touched)
  uint32_t size;             // bytes the client lends the driver for its bookkeeping
  uint32_t error;
};
struct QueryEvent {
  uint32_t fd;
  uint32_t event_id;
  uint32_t flags;    // bit 0: the event fd is close-on-exec
  int32_t event_fd;  // out: an eventfd in the calling process
  uint32_t error;
  uint32_t reserved;
};
struct MapSharedMem {
  uint64_t transfer_memory;
  uint32_t fd;
  uint32_t nvmap_handle;
  uint32_t error;
  uint32_t reserved;
};
struct Status {  // NvDrvStatus
  uint32_t free_size;
  uint32_t allocatable_size;
  uint32_t minimum_free_size;
  uint32_t minimum_allocatable_size;
  uint8_t reserved[0x10];
};
struct GetStatus {
  Status status;
  uint32_t error;
  uint32_t reserved;
};
struct SetAruid {  // SetAruid and SetAruidWithoutCheck
  uint64_t aruid;
  uint32_t error;
  uint32_t reserved;
};
struct Ioctl2 {
  uint32_t fd;
  uint32_t code;
  uint64_t in, in_size;
  uint64_t in2, in2_size;  // the second input buffer
  uint64_t out, out_size;
  uint32_t error;
  uint32_t reserved;
};
struct Ioctl3 {
  uint32_t fd;
  uint32_t code;
  uint64_t in, in_size;
  uint64_t out, out_size;
  uint64_t out2, out2_size;  // the second output buffer
  uint32_t error;
  uint32_t reserved;
};
struct SetGraphicsFirmwareMemoryMarginEnabled {
  uint64_t value;
  uint32_t error;
  uint32_t reserved;
};

// Offset of the `error` word in a command's struct, or -1 for commands without one.
int ErrorOffset(uint32_t code);

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvdrv
