/* Opens under nvsentry: whether a signal can interrupt them, and the ways a path reaches a device
 * node. Modes:
 *   eintr PATH COUNT   COUNT opens (and closes) of PATH while a 20 kHz SIGALRM without SA_RESTART
 *                      interrupts the program; prints "eintr=N errors=M signals=S"
 *   paths              a device node reached through a symlink, io_uring's openat, a
 *                      /proc/self/fd reopen and O_PATH, and what its file does besides ioctls;
 *                      prints key=value lines
 *   reach              only the symlink and io_uring lines of paths (with trapped opens a
 *                      /proc/self/fd reopen of the session's pipe end reads from the pipe) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "nvctrl.h"

static volatile sig_atomic_t g_signals;

static void on_alarm(int sig) {
  (void)sig;
  g_signals++;
}

static int mode_eintr(const char* path, long count) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: an interrupted call fails with EINTR */
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval every = {{0, 50}, {0, 50}};
  setitimer(ITIMER_REAL, &every, NULL);
  long eintr = 0, errors = 0;
  for (long i = 0; i < count; i++) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      close(fd);
    } else if (errno == EINTR) {
      eintr++;
    } else {
      errors++;
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("eintr=%ld errors=%ld signals=%ld\n", eintr, errors, (long)g_signals);
  return 0;
}

/* 0 when SYNCPT_READ works on fd, else the errno. */
static int read_syncpt(int fd) {
  struct nv_id_value r = {0, 0};
  return ioctl(fd, NV_SYNCPT_READ, &r) == 0 ? 0 : errno;
}

static int err_of(long rc) { return rc < 0 ? errno : 0; }

/* openat(AT_FDCWD, path, O_RDWR) as one io_uring operation, with raw system calls: the new fd or
 * -errno. */
static int uring_open(const char* path) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  int ring = (int)syscall(__NR_io_uring_setup, 1, &p);
  if (ring < 0) return -errno;
  size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  char* sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
  char* cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
  struct io_uring_sqe* sqes = mmap(NULL, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE,
                                   MAP_SHARED, ring, IORING_OFF_SQES);
  if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) return -ENOMEM;
  memset(&sqes[0], 0, sizeof sqes[0]);
  sqes[0].opcode = IORING_OP_OPENAT;
  sqes[0].fd = AT_FDCWD;
  sqes[0].addr = (uint64_t)(uintptr_t)path;
  sqes[0].open_flags = O_RDWR;
  unsigned* tail = (unsigned*)(sq + p.sq_off.tail);
  ((unsigned*)(sq + p.sq_off.array))[*tail & *(unsigned*)(sq + p.sq_off.ring_mask)] = 0;
  __atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
  if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) return -errno;
  unsigned head = *(unsigned*)(cq + p.cq_off.head);
  struct io_uring_cqe* cqe =
      &((struct io_uring_cqe*)(cq + p.cq_off.cqes))[head & *(unsigned*)(cq + p.cq_off.ring_mask)];
  int res = cqe->res;
  close(ring);
  return res;
}

static int mode_paths(int reach_only) {
  char link[64];
  snprintf(link, sizeof link, "/tmp/nvs-open-guest-%d", getpid());
  unlink(link);
  if (symlink("/dev/nvhost-ctrl", link) != 0) return 3;
  int via_link = open(link, O_RDWR);
  printf("symlink_ioctl=%d\n", via_link >= 0 ? read_syncpt(via_link) : -errno);
  struct open_how how = {O_RDWR, 0, RESOLVE_NO_SYMLINKS};
  printf("no_symlinks_errno=%d\n", err_of(syscall(SYS_openat2, AT_FDCWD, link, &how, sizeof how)));
  unlink(link);

  int via_uring = uring_open("/dev/nvhost-ctrl");
  printf("io_uring_ioctl=%d\n", via_uring >= 0 ? read_syncpt(via_uring) : via_uring);

  if (reach_only) return 0;

  int fd = open("/dev/nvhost-ctrl", O_RDWR);
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  int reopened = open(self, O_RDWR);
  printf("reopen_ioctl=%d\n", reopened >= 0 ? read_syncpt(reopened) : -errno);
  /* Where the sentry's identification left the file's position (what the guest can see of it). */
  printf("position=%ld\n", reopened >= 0 ? (long)lseek(reopened, 0, SEEK_CUR) : -1L);
  /* The sentry asks the file for its session with lseek(SEEK_DATA); the guest asking gets ENXIO. */
  printf("seek_data_errno=%d\n", reopened >= 0 ? err_of(lseek(reopened, 0, SEEK_DATA)) : -1);
  close(fd);
  printf("reopen_after_close_ioctl=%d\n", reopened >= 0 ? read_syncpt(reopened) : -errno);

  int path_only = open("/dev/nvhost-ctrl", O_PATH);
  printf("o_path_ioctl=%d\n", path_only >= 0 ? read_syncpt(path_only) : -errno);

  char byte;
  printf("read_errno=%d\n", err_of(read(reopened, &byte, 1)));
  printf("write_errno=%d\n", err_of(write(reopened, "x", 1)));
  void* m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, reopened, 0);
  printf("mmap_errno=%d\n", m == MAP_FAILED ? errno : 0);
  int winsize[2];
  printf("foreign_ioctl_errno=%d\n", err_of(ioctl(reopened, TIOCGWINSZ, winsize)));
  struct stat st;
  printf("stat_errno=%d\n", err_of(stat("/dev/nvhost-ctrl", &st)));
  printf("absent_errno=%d\n", err_of(open("/dev/nvhost-nonesuch", O_RDWR)));
  printf("excl_errno=%d\n", err_of(open("/dev/nvhost-ctrl", O_RDWR | O_CREAT | O_EXCL, 0600)));
  printf("directory_errno=%d\n", err_of(open("/dev/nvhost-ctrl", O_RDONLY | O_DIRECTORY)));
  printf("dev_write_errno=%d\n", err_of(open("/dev/nvsentry-new-file", O_RDWR | O_CREAT, 0600)));
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 4 && strcmp(argv[1], "eintr") == 0) return mode_eintr(argv[2], atol(argv[3]));
  if (argc >= 2 && strcmp(argv[1], "paths") == 0) return mode_paths(0);
  if (argc >= 2 && strcmp(argv[1], "reach") == 0) return mode_paths(1);
  fprintf(stderr, "usage: open_guest eintr PATH COUNT | paths | reach\n");
  return 2;
}
