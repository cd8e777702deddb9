/* What the test guests know of /dev/nvhost-ctrl: Switchbrew's codes and layouts, written out by
 * hand so the tests do not share a single definition with the code they test. */
#pragma once
#include <stdint.h>

#define NV_SYNCPT_READ 0xC0080014u
#define NV_SYNCPT_INCR 0x40040015u
#define NV_SYNCPT_WAIT 0xC00C0016u
#define NV_SYNCPT_WAITEX 0xC0100019u
#define NV_SYNCPT_READ_MAX 0xC008001Au
#define NV_SYNCPT_GET_SHIFT 0xC0040022u
#define NV_CTRL_UNKNOWN 0xC0080099u /* magic 0, not a code the device has */

struct nv_id_value {
  uint32_t id, value;
};
struct nv_wait {
  uint32_t id, thresh;
  int32_t timeout;
};
struct nv_wait_ex {
  uint32_t id, thresh;
  int32_t timeout;
  uint32_t value;
};
