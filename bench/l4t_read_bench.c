/* SYNCPT_READ straight on an L4T host's /dev/nvhost-ctrl (or `nvsentry fake-l4t DIR`'s), with no
 * sandbox: what one host call costs, the part of a host-backed guest's SYNCPT_READ that is the
 * host's own (docs/benchmarks.md, "The host backend"). Prints "ns_per_call" blocks (timing.h).
 *   l4t_read_bench DIR [CALLS] [BLOCKS] */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* NVHOST_IOCTL_CTRL_SYNCPT_READ of L4T's nvhost_ioctl.h: _IOWR('H', 1, {u32 id; u32 value}). */
#define L4T_SYNCPT_READ 0xC0084801u

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* DIR must be a directory: a word starting with '-' is an option this program does not have. */
static int bad_dir(const char* prog, const char* dir) {
  struct stat st;
  if (dir[0] == '-')
    fprintf(stderr, "%s: unknown option '%s'\n", prog, dir);
  else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    fprintf(stderr, "%s: '%s' is not a directory\n", prog, dir);
  else
    return 0;
  return 1;
}

int main(int argc, char** argv) {
  char *end_calls = NULL, *end_blocks = NULL;
  const long calls = argc > 2 ? strtol(argv[2], &end_calls, 10) : 20000;
  const long blocks = argc > 3 ? strtol(argv[3], &end_blocks, 10) : 5;
  if (argc < 2 || argc > 4 || (argc > 2 && *end_calls != '\0') ||
      (argc > 3 && *end_blocks != '\0') || calls <= 0 || blocks <= 0) {
    fprintf(stderr, "l4t_read_bench: %s\nusage: l4t_read_bench DIR [CALLS] [BLOCKS]\n",
            argc < 2   ? "missing DIR"
            : argc > 4 ? "too many arguments"
                       : "CALLS and BLOCKS must be numbers above 0");
    return 2;
  }
  if (bad_dir("l4t_read_bench", argv[1])) {
    fprintf(stderr, "usage: l4t_read_bench DIR [CALLS] [BLOCKS]\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/nvhost-ctrl", argv[1]);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  uint32_t arg[2] = {1, 0};
  for (long i = 0; i < calls / 4; ++i)
    if (ioctl(fd, L4T_SYNCPT_READ, arg) != 0) return perror("SYNCPT_READ"), 1;
  printf("ns_per_call");
  for (long b = 0; b < blocks; ++b) {
    const int64_t t0 = now_ns();
    for (long i = 0; i < calls; ++i)
      if (ioctl(fd, L4T_SYNCPT_READ, arg) != 0) return perror("SYNCPT_READ"), 1;
    printf(" %.1f", (double)(now_ns() - t0) / (double)calls);
  }
  printf("\n");
  close(fd);
  return 0;
}
