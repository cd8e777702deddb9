/* A guest that drives /dev/nvhost-ctrl's syncpoints the way a client does: read a syncpoint,
 * increment it, wait for a threshold that another thread reaches, and see a wait time out.
 * Plain Linux C: run it under `nvsentry run` (it fails with ENOENT anywhere without a GPU). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define SYNCPT_READ 0xC0080014u
#define SYNCPT_INCR 0x40040015u
#define SYNCPT_WAITEX 0xC0100019u
#define SYNCPT_READ_MAX 0xC008001Au

struct id_value {
  uint32_t id, value;
};
struct wait_ex {
  uint32_t id, thresh;
  int32_t timeout;
  uint32_t value;
};

static int ctrl;
static const uint32_t kSyncpt = 20;

static void* incrementer(void* arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    usleep(20 * 1000);
    uint32_t id = kSyncpt;
    ioctl(ctrl, SYNCPT_INCR, &id);
  }
  return NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc != 1) {
    fprintf(stderr, "syncpt_demo: takes no arguments, not '%s'\nusage: syncpt_demo\n", argv[1]);
    return 2;
  }
  ctrl = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  if (ctrl < 0) {
    fprintf(stderr, "open /dev/nvhost-ctrl: %s (run me under nvsentry)\n", strerror(errno));
    return 1;
  }
  struct id_value r = {kSyncpt, 0};
  if (ioctl(ctrl, SYNCPT_READ, &r) != 0) {
    perror("SYNCPT_READ");
    return 1;
  }
  printf("syncpoint %u reads %u\n", r.id, r.value);

  uint32_t id = kSyncpt;
  if (ioctl(ctrl, SYNCPT_INCR, &id) != 0) {
    perror("SYNCPT_INCR");
    return 1;
  }
  uint32_t base = r.value + 1;
  ioctl(ctrl, SYNCPT_READ, &r);
  printf("incremented it: now %u\n", r.value);

  pthread_t t;
  pthread_create(&t, NULL, incrementer, NULL);
  struct wait_ex w = {kSyncpt, base + 3, 2000, 0};
  double t0 = now_ms();
  if (ioctl(ctrl, SYNCPT_WAITEX, &w) != 0) {
    perror("SYNCPT_WAITEX");
    return 1;
  }
  printf("waited for %u: reached with value %u after %.0f ms (another thread incremented it)\n",
         w.thresh, w.value, now_ms() - t0);
  pthread_join(t, NULL);

  struct wait_ex late = {kSyncpt, w.value + 100, 50, 0};
  t0 = now_ms();
  int rc = ioctl(ctrl, SYNCPT_WAITEX, &late);
  printf("waited for %u with a 50 ms timeout: %s after %.0f ms\n", late.thresh,
         rc == 0 ? "reached?!" : strerror(errno), now_ms() - t0);

  struct id_value m = {kSyncpt, 0};
  ioctl(ctrl, SYNCPT_READ_MAX, &m);
  printf("syncpoint %u max is %u\n", m.id, m.value);
  close(ctrl);
  return rc == -1 && errno == ETIMEDOUT ? 0 : 1;
}
