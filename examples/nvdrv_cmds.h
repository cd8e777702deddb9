/* /dev/nvdrv's service commands as a client lays them out (magic 'n', nr = the command id;
 * Switchbrew's NV services page lists them), shared by the example client (nvclient.c) and the
 * test guests. Each command struct ends with the NvError the command answers. */
#ifndef NVSENTRY_EXAMPLES_NVDRV_CMDS_H
#define NVSENTRY_EXAMPLES_NVDRV_CMDS_H

#include <stdint.h>

#define NVDRV_IOC(dir, nr, size) \
  (((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)'n' << 8) | (nr))

struct nvdrv_open {
  char path[0x100];
  uint32_t fd, error;
};
struct nvdrv_ioctl {
  uint32_t fd, code;
  uint64_t in, in_size, out, out_size;
  uint32_t error, reserved;
};
struct nvdrv_ioctl2 {
  uint32_t fd, code;
  uint64_t in, in_size, in2, in2_size, out, out_size;
  uint32_t error, reserved;
};
struct nvdrv_ioctl3 {
  uint32_t fd, code;
  uint64_t in, in_size, out, out_size, out2, out2_size;
  uint32_t error, reserved;
};
struct nvdrv_close {
  uint32_t fd, error;
};
struct nvdrv_init {
  uint64_t transfer_memory;
  uint32_t size, error;
};
struct nvdrv_query {
  uint32_t fd, event_id, flags;
  int32_t event_fd;
  uint32_t error, reserved;
};

#define NVDRV_OPEN NVDRV_IOC(3, 0, sizeof(struct nvdrv_open))
#define NVDRV_IOCTL NVDRV_IOC(3, 1, sizeof(struct nvdrv_ioctl))
#define NVDRV_CLOSE NVDRV_IOC(3, 2, sizeof(struct nvdrv_close))
#define NVDRV_INITIALIZE NVDRV_IOC(3, 3, sizeof(struct nvdrv_init))
#define NVDRV_QUERY_EVENT NVDRV_IOC(3, 4, sizeof(struct nvdrv_query))
#define NVDRV_IOCTL2 NVDRV_IOC(3, 11, sizeof(struct nvdrv_ioctl2))
#define NVDRV_IOCTL3 NVDRV_IOC(3, 12, sizeof(struct nvdrv_ioctl3))

#endif
