/* The integration tests' guest: one program, one mode per scenario. Each mode prints what it saw
 * as "key=value" lines and exits 0 when the scenario behaved, non-zero with a reason otherwise.
 * It runs under nvsentry; a few modes also run natively for comparison. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvctrl.h"

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, "\n");                                 \
      exit(1);                                               \
    }                                                        \
  } while (0)

static int open_ctrl(void) {
  int fd = open("/dev/nvhost-ctrl", O_RDWR | O_CLOEXEC);
  CHECK(fd >= 0, "open /dev/nvhost-ctrl: %s", strerror(errno));
  return fd;
}

static uint32_t rd(int fd, uint32_t id) {
  struct nv_id_value a = {id, 0xdeadbeef};
  CHECK(ioctl(fd, NV_SYNCPT_READ, &a) == 0, "SYNCPT_READ(%u): %s", id, strerror(errno));
  return a.value;
}

static void incr(int fd, uint32_t id) {
  CHECK(ioctl(fd, NV_SYNCPT_INCR, &id) == 0, "SYNCPT_INCR(%u): %s", id, strerror(errno));
}

static int err_of(int rc) { return rc == 0 ? 0 : errno; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --- basic: read, increment, read_max, bad id, an unknown code, GET_SHIFT --- */
static int mode_basic(void) {
  int fd = open_ctrl();
  uint32_t v0 = rd(fd, 7);
  incr(fd, 7);
  incr(fd, 7);
  CHECK(rd(fd, 7) == v0 + 2, "two increments");
  struct nv_id_value m = {7, 0};
  CHECK(ioctl(fd, NV_SYNCPT_READ_MAX, &m) == 0 && m.value == v0 + 2, "read_max %u", m.value);
  struct nv_id_value bad = {192, 0};
  printf("bad_id_errno=%d\n", err_of(ioctl(fd, NV_SYNCPT_READ, &bad)));
  uint32_t bad_incr = 1000;
  printf("bad_incr_errno=%d\n", err_of(ioctl(fd, NV_SYNCPT_INCR, &bad_incr)));
  uint32_t buf[4] = {0};
  printf("unknown_errno=%d\n", err_of(ioctl(fd, NV_CTRL_UNKNOWN, buf)));
  /* GET_SHIFT's only output is the shift: prefilled, so an answer that writes nothing shows. */
  buf[0] = 0xFFFFFFFFu;
  int shift_err = err_of(ioctl(fd, NV_SYNCPT_GET_SHIFT, buf));
  printf("shift_errno=%d shift=0x%x\n", shift_err, buf[0]);
  /* wait on an already reached threshold returns at once with the value */
  struct nv_wait_ex w = {7, v0 + 1, 1000, 0};
  CHECK(ioctl(fd, NV_SYNCPT_WAITEX, &w) == 0 && w.value == v0 + 2, "reached waitex %u", w.value);
  /* timeout 0 on an unreached threshold: Timeout at once */
  struct nv_wait z = {7, v0 + 50, 0};
  double t0 = now_ms();
  printf("zero_timeout_errno=%d\n", err_of(ioctl(fd, NV_SYNCPT_WAIT, &z)));
  CHECK(now_ms() - t0 < 50, "zero timeout took %.1f ms", now_ms() - t0);
  /* a bad id for a wait */
  struct nv_wait bw = {500, 1, 10};
  printf("bad_wait_errno=%d\n", err_of(ioctl(fd, NV_SYNCPT_WAIT, &bw)));
  return 0;
}

/* --- waits: one satisfied by another thread, one that times out --- */
struct incr_args {
  int fd;
  uint32_t id;
  int count;
  int delay_us;
};
static void* incrementer(void* p) {
  struct incr_args* a = p;
  for (int i = 0; i < a->count; i++) {
    if (a->delay_us) usleep(a->delay_us);
    incr(a->fd, a->id);
  }
  return NULL;
}

static int mode_wait(void) {
  int fd = open_ctrl();
  uint32_t id = 11, base = rd(fd, id);
  struct incr_args ia = {fd, id, 5, 10000};
  pthread_t t;
  pthread_create(&t, NULL, incrementer, &ia);
  struct nv_wait_ex w = {id, base + 5, 5000, 0};
  double t0 = now_ms();
  CHECK(ioctl(fd, NV_SYNCPT_WAITEX, &w) == 0, "waitex: %s", strerror(errno));
  double waited = now_ms() - t0;
  pthread_join(t, NULL);
  CHECK(w.value == base + 5, "waitex value %u, want %u", w.value, base + 5);
  printf("wait_ms=%.0f\n", waited);
  struct nv_wait_ex late = {id, base + 1000, 100, 0x12345678};
  t0 = now_ms();
  int e = err_of(ioctl(fd, NV_SYNCPT_WAITEX, &late));
  printf("timeout_errno=%d timeout_ms=%.0f untouched=%d\n", e, now_ms() - t0,
         late.value == 0x12345678);
  /* wrap-around: thresholds compare modulo 2^32 */
  uint32_t now = rd(fd, id);
  struct nv_wait past = {id, now - 0x10, 0};           /* behind: reached */
  struct nv_wait ahead = {id, now + 0x10, 0};          /* ahead: not reached */
  struct nv_wait wrapped = {id, now + 0x80000001u, 0}; /* more than half away: in the past */
  printf("past=%d ahead=%d wrapped=%d\n", err_of(ioctl(fd, NV_SYNCPT_WAIT, &past)),
         err_of(ioctl(fd, NV_SYNCPT_WAIT, &ahead)), err_of(ioctl(fd, NV_SYNCPT_WAIT, &wrapped)));
  return 0;
}

/* --- many waiters at once while others increment --- */
static int g_fd;
static atomic_int g_ok;
static void* waiter(void* p) {
  uint32_t thresh = (uint32_t)(uintptr_t)p;
  struct nv_wait_ex w = {12, thresh, 10000, 0};
  if (ioctl(g_fd, NV_SYNCPT_WAITEX, &w) == 0 && (int32_t)(w.value - thresh) >= 0)
    atomic_fetch_add(&g_ok, 1);
  return NULL;
}

static int mode_many_waiters(void) {
  g_fd = open_ctrl();
  enum { kWaiters = 64, kIncrementers = 4, kPerIncr = 50 };
  uint32_t base = rd(g_fd, 12);
  pthread_t w[kWaiters], inc[kIncrementers];
  for (int i = 0; i < kWaiters; i++)
    pthread_create(&w[i], NULL, waiter,
                   (void*)(uintptr_t)(base + 1 + (i * 3) % (kIncrementers * kPerIncr)));
  struct incr_args ia = {g_fd, 12, kPerIncr, 200};
  for (int i = 0; i < kIncrementers; i++) pthread_create(&inc[i], NULL, incrementer, &ia);
  for (int i = 0; i < kIncrementers; i++) pthread_join(inc[i], NULL);
  for (int i = 0; i < kWaiters; i++) pthread_join(w[i], NULL);
  printf("waiters_ok=%d of %d final=%u\n", atomic_load(&g_ok), kWaiters, rd(g_fd, 12) - base);
  return atomic_load(&g_ok) == kWaiters ? 0 : 1;
}

/* --- fd identity: dup, dup2, dup3, F_DUPFD, close and reuse, fork, exec --- */
static int mode_fds(const char* self) {
  int fd = open_ctrl();
  uint32_t base = rd(fd, 13);
  int d1 = dup(fd);
  int d2 = dup2(fd, 100);
  int d3 = dup3(fd, 101, O_CLOEXEC);
  int d4 = fcntl(fd, F_DUPFD, 200);
  int d5 = fcntl(fd, F_DUPFD_CLOEXEC, 300);
  int all[] = {d1, d2, d3, d4, d5};
  for (int i = 0; i < 5; i++) incr(all[i], 13);
  close(fd);
  CHECK(rd(d1, 13) == base + 5, "after dups");
  /* reuse a number: a regular file now sits where a device fd was */
  close(d2);
  int plain = open("/proc/self/cmdline", O_RDONLY);
  CHECK(dup2(plain, 100) == 100, "dup2 plain");
  struct nv_id_value a = {13, 0};
  printf("reused_number_errno=%d\n", err_of(ioctl(100, NV_SYNCPT_READ, &a)));
  /* the reverse: a device fd dup2'd over a plain fd's number */
  CHECK(dup2(d1, plain) == plain, "dup2 over plain");
  CHECK(rd(plain, 13) == base + 5, "device over plain number");
  /* fork: the child uses the inherited fd */
  pid_t c = fork();
  if (c == 0) {
    incr(d4, 13);
    _exit(rd(d4, 13) == base + 6 ? 0 : 1);
  }
  int st;
  waitpid(c, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child");
  /* exec: an fd without CLOEXEC survives; the CLOEXEC ones do not */
  c = fork();
  if (c == 0) {
    char num[16];
    snprintf(num, sizeof num, "%d", d4);
    execl(self, self, "exec_child", num, (char*)NULL);
    _exit(99);
  }
  waitpid(c, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec child status %d", st);
  CHECK(rd(d1, 13) == base + 7, "after exec child");
  printf("fds_ok=1\n");
  return 0;
}

static int mode_exec_child(int fd) {
  incr(fd, 13);
  /* the CLOEXEC dups at 101 and 300 are gone */
  CHECK(fcntl(101, F_GETFD) == -1 && fcntl(300, F_GETFD) == -1, "cloexec fds survived exec");
  return 0;
}

/* --- an fd sent over a unix socket to a process that never opened the device --- */
static int mode_scm_rights(void) {
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  pid_t c = fork();
  if (c == 0) {
    close(sv[0]);
    char b;
    struct iovec iov = {&b, 1};
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    CHECK(recvmsg(sv[1], &m, 0) == 1, "recvmsg");
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    incr(fd, 14);
    _exit(0);
  }
  close(sv[1]);
  int fd = open_ctrl();
  uint32_t base = rd(fd, 14);
  int dupd = dup(fd);
  close(fd); /* only the dup and the one in flight keep the session */
  char b = 'x';
  struct iovec iov = {&b, 1};
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct msghdr m = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr* cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &dupd, sizeof dupd);
  CHECK(sendmsg(sv[0], &m, 0) == 1, "sendmsg");
  close(dupd); /* now the session lives only in the message and the child */
  int st;
  waitpid(c, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
  int again = open_ctrl();
  printf("scm_delta=%u\n", rd(again, 14) - base);
  return 0;
}

/* --- NVIDIA-looking ioctls on fds that are not device sessions: as without the sandbox --- */
static int mode_nondevice(void) {
  int p[2];
  pipe(p);
  int f = open("/proc/self/cmdline", O_RDONLY);
  int n = open("/dev/null", O_RDWR);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct nv_id_value a = {1, 0};
  printf("pipe=%d file=%d null=%d socket=%d badfd=%d\n", err_of(ioctl(p[0], NV_SYNCPT_READ, &a)),
         err_of(ioctl(f, NV_SYNCPT_READ, &a)), err_of(ioctl(n, NV_SYNCPT_READ, &a)),
         err_of(ioctl(s, NV_SYNCPT_READ, &a)), err_of(ioctl(12345, NV_SYNCPT_READ, &a)));
  /* FIONREAD and TCGETS are not trapped at all; FIBMAP (magic 0) is, and must behave natively */
  int avail = -1;
  write(p[1], "abc", 3);
  int fionread = err_of(ioctl(p[0], FIONREAD, &avail));
  printf("fionread=%d avail=%d\n", fionread, avail);
  int blk = 0;
  printf("fibmap=%d\n", err_of(ioctl(p[0], 1 /* FIBMAP */, &blk)));
  return 0;
}

/* --- bad argument pointers --- */
static int mode_badptr(void) {
  int fd = open_ctrl();
  long page = sysconf(_SC_PAGESIZE);
  char* m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(m + page, page);
  struct nv_id_value* straddle = (struct nv_id_value*)(m + page - 4); /* half unmapped */
  straddle->id = 1;
  char* ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ((struct nv_id_value*)ro)->id = 1;
  mprotect(ro, page, PROT_READ);
  uint32_t before = rd(fd, 15);
  uint32_t* ro_id = (uint32_t*)ro;
  printf("null=%d straddle=%d readonly_out=%d readonly_in=%d wild=%d\n",
         err_of(ioctl(fd, NV_SYNCPT_READ, NULL)), err_of(ioctl(fd, NV_SYNCPT_READ, straddle)),
         err_of(ioctl(fd, NV_SYNCPT_READ, ro)), err_of(ioctl(fd, NV_SYNCPT_INCR, ro_id)),
         err_of(ioctl(fd, NV_SYNCPT_READ, (void*)0x10)));
  /* the read-only INCR argument is readable: that increment happened (id 1, not 15) */
  CHECK(rd(fd, 15) == before, "syncpoint 15 changed");
  return 0;
}

/* --- a thread rewriting the argument while the call is in flight --- */
static volatile uint32_t g_racy_id = 3;
static atomic_int g_stop;
static void* flipper(void* p) {
  (void)p;
  while (!atomic_load(&g_stop)) {
    g_racy_id = 3;
    g_racy_id = 5000; /* invalid */
  }
  return NULL;
}

static int mode_rewrite(void) {
  int fd = open_ctrl();
  uint32_t base = rd(fd, 3);
  pthread_t t;
  pthread_create(&t, NULL, flipper, NULL);
  int ok = 0, einval = 0, other = 0;
  for (int i = 0; i < 20000; i++) {
    int rc = ioctl(fd, NV_SYNCPT_INCR, (void*)&g_racy_id);
    if (rc == 0)
      ok++;
    else if (errno == EINVAL)
      einval++;
    else
      other++;
  }
  atomic_store(&g_stop, 1);
  pthread_join(t, NULL);
  uint32_t delta = rd(fd, 3) - base;
  printf("ok=%d einval=%d other=%d delta=%u\n", ok, einval, other, delta);
  return (delta == (uint32_t)ok && other == 0 && ok > 0 && einval > 0) ? 0 : 1;
}

/* --- signals interrupting parked waits --- */
static void on_usr1(int s) { (void)s; }
struct sig_wait {
  int fd;
  uint32_t thresh;
  int rc;
  int err;
  double ms;
};
static void* sig_waiter(void* p) {
  struct sig_wait* w = p;
  struct nv_wait a = {16, w->thresh, 20000};
  double t0 = now_ms();
  w->rc = ioctl(w->fd, NV_SYNCPT_WAIT, &a);
  w->err = errno;
  w->ms = now_ms() - t0;
  return NULL;
}

static int mode_signal(void) {
  int fd = open_ctrl();
  uint32_t base = rd(fd, 16);
  /* without SA_RESTART: the wait fails with EINTR soon after the signal */
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  struct sig_wait w1 = {fd, base + 1, 0, 0, 0};
  pthread_t t;
  pthread_create(&t, NULL, sig_waiter, &w1);
  usleep(200000);
  pthread_kill(t, SIGUSR1);
  pthread_join(t, NULL);
  printf("eintr_rc=%d eintr_errno=%d eintr_ms=%.0f\n", w1.rc, w1.err, w1.ms);
  /* with SA_RESTART: the signal is handled and the wait goes on until the increment */
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  struct sig_wait w2 = {fd, base + 1, 0, 0, 0};
  pthread_create(&t, NULL, sig_waiter, &w2);
  usleep(200000);
  pthread_kill(t, SIGUSR1);
  usleep(200000);
  incr(fd, 16);
  pthread_join(t, NULL);
  printf("restart_rc=%d restart_ms=%.0f\n", w2.rc, w2.ms);
  /* a waiting process killed outright: its parked call is dropped, the sentry goes on */
  pid_t c = fork();
  if (c == 0) {
    struct nv_wait a = {16, base + 100, -1};
    ioctl(fd, NV_SYNCPT_WAIT, &a);
    _exit(0);
  }
  /* Kill it only once it is inside the wait (its ioctl, syscall 16 on x86-64, is in progress),
   * however slowly a loaded machine starts it, then give the sentry time to park the call. */
  char path[64], line[64];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)c);
  for (int i = 0; i < 500; i++) {
    FILE* f = fopen(path, "re");
    int in_ioctl = f != NULL && fgets(line, sizeof line, f) != NULL && strncmp(line, "16 ", 3) == 0;
    if (f != NULL) fclose(f);
    if (in_ioctl) break;
    usleep(10000);
  }
  usleep(100000);
  kill(c, SIGKILL);
  waitpid(c, NULL, 0);
  usleep(400000); /* longer than the sentry's sweep period */
  printf("after_kill_read=%u\n", rd(fd, 16) - base);
  return 0;
}

/* --- open paths --- */
static int mode_paths(void) {
  int e1 = err_of(open("/dev/nvhost-bogus", O_RDWR) >= 0 ? 0 : -1);
  int e2 = err_of(open("/dev/nvhost-ctrl/", O_RDWR) >= 0 ? 0 : -1);
  int e3 = err_of(open("/dev/nvhost-ctrl", O_RDWR | O_CREAT | O_EXCL, 0600) >= 0 ? 0 : -1);
  int e4 = err_of(open("/dev/nvhost-ctrl", O_RDONLY | O_DIRECTORY) >= 0 ? 0 : -1);
  printf("bogus=%d slash=%d excl=%d directory=%d\n", e1, e2, e3, e4);
  int dev = open("/dev", O_RDONLY | O_DIRECTORY);
  int a = openat(dev, "nvhost-ctrl", O_RDWR);
  int b = open("/dev/../dev/./nvhost-ctrl", O_RDWR);
  struct open_how how = {.flags = O_RDWR | O_CLOEXEC};
  int c = (int)syscall(SYS_openat2, AT_FDCWD, "/dev/nvhost-ctrl", &how, sizeof how);
  chdir("/dev");
  int d = open("nvhost-ctrl", O_RDWR);
  int e = creat("/dev/nvhost-ctrl", 0600);
  printf("openat=%d dotdot=%d openat2=%d relative=%d creat=%d\n", a >= 0, b >= 0, c >= 0, d >= 0,
         e >= 0);
  CHECK(a >= 0 && b >= 0 && c >= 0 && d >= 0, "device opens");
  CHECK((fcntl(c, F_GETFD) & FD_CLOEXEC) != 0, "openat2 O_CLOEXEC honoured");
  CHECK((fcntl(a, F_GETFD) & FD_CLOEXEC) == 0, "no O_CLOEXEC, none set");
  rd(a, 1);
  rd(d, 1);
  /* ordinary files still open natively, including ones with "nv" in their names */
  char tmpl[] = "/tmp/nvsentry-nvfile-XXXXXX";
  int t = mkstemp(tmpl);
  CHECK(t >= 0 && write(t, "hi", 2) == 2, "mkstemp");
  int again = open(tmpl, O_RDONLY);
  char buf[4] = {0};
  CHECK(again >= 0 && read(again, buf, 4) == 2 && !strcmp(buf, "hi"), "native open of nv file");
  unlink(tmpl);
  /* a device fd reads EOF and is not a byte stream */
  char x;
  printf("device_read=%zd\n", read(a, &x, 1));
  return 0;
}

/* --- sessions end when the guest closes them: churn, then wait for the harness to look --- */
static int mode_churn(void) {
  for (int i = 0; i < 3000; i++) {
    int fd = open_ctrl();
    if (i % 2) {
      int d = dup(fd);
      close(d);
    }
    rd(fd, 1);
    close(fd);
  }
  printf("churned\n");
  fflush(stdout);
  char b;
  read(0, &b, 1); /* the harness counts the sentry's fds, then closes our stdin */
  return 0;
}

/* --- a host NVIDIA node must stay out of reach, even when the path changes mid-call --- */
static char g_path[64];
static void* path_swapper(void* p) {
  const char* node = p;
  while (!atomic_load(&g_stop)) {
    strcpy(g_path, "/tmp");
    strcpy(g_path, node);
  }
  return NULL;
}

static int reached_host(int fd, dev_t standin) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  char b;
  return (S_ISCHR(st.st_mode) && st.st_rdev == standin) || read(fd, &b, 1) == 1;
}

static int mode_host_node(const char* node, const char* rdev) {
  dev_t standin = (dev_t)strtoull(rdev, NULL, 0);
  int breaches = 0, opened = 0;
  int fd = open(node, O_RDONLY);
  printf("direct_errno=%d\n", fd < 0 ? errno : 0);
  if (fd >= 0 && reached_host(fd, standin)) breaches++;
  char via_proc[128];
  snprintf(via_proc, sizeof via_proc, "/proc/1/root%s", node);
  fd = open(via_proc, O_RDONLY);
  if (fd >= 0 && reached_host(fd, standin)) breaches++;
  const int umount_errno = err_of(umount2(node, MNT_DETACH));
  const char* made = "/tmp/nvsentry-mknod-test";
  const int mknod_errno = err_of(mknod(made, S_IFCHR | 0600, standin));
  if (mknod_errno == 0) unlink(made); /* natively (the test that shows this guest can fail) */
  printf("umount_errno=%d mknod_errno=%d\n", umount_errno, mknod_errno);
  atomic_store(&g_stop, 0);
  strcpy(g_path, "/tmp");
  pthread_t t;
  pthread_create(&t, NULL, path_swapper, (void*)node);
  double t0 = now_ms();
  while (now_ms() - t0 < 1500) {
    int f = open(g_path, O_RDONLY | O_NONBLOCK);
    if (f >= 0) {
      struct stat st;
      fstat(f, &st);
      if (!S_ISDIR(st.st_mode)) opened++;
      if (reached_host(f, standin)) breaches++;
      close(f);
    }
  }
  atomic_store(&g_stop, 1);
  pthread_join(t, NULL);
  printf("breaches=%d opened_other=%d\n", breaches, opened);
  return breaches == 0 ? 0 : 1;
}

/* --- the sentry crashes: the guest must not outlive it --- */
static int mode_crash_victim(const char* marker) {
  pid_t c = fork();
  if (c == 0) {
    execlp("sleep", "sleep", marker, (char*)NULL);
    _exit(1);
  }
  usleep(100000);
  printf("victim_ready\n");
  fflush(stdout);
  open("/dev/nvhost-ctrl", O_RDWR); /* the sentry crashes serving this */
  sleep(30);
  return 3;
}

/* --- held_first: the first ioctl (SYNCPT_INCR, a slow call, or SYNCPT_READ, a fast one) is held
 * by the sentry (test hook hold-first-ioctl) until another ioctl has been answered; a second
 * thread's SYNCPT_READ must be answered meanwhile --- */
static atomic_int g_first_started;
static void* first_call(void* p) {
  int fd = (int)(intptr_t)p;
  atomic_store(&g_first_started, 1);
  incr(fd, 20);
  return NULL;
}
static void* first_read(void* p) {
  int fd = (int)(intptr_t)p;
  atomic_store(&g_first_started, 1);
  (void)rd(fd, 20);
  return NULL;
}

static int mode_held_first(const char* kind) {
  int fd = open_ctrl();
  pthread_t t;
  pthread_create(&t, NULL, !strcmp(kind, "incr") ? first_call : first_read, (void*)(intptr_t)fd);
  while (!atomic_load(&g_first_started)) usleep(1000);
  usleep(50000); /* the first call reaches the sentry and is held */
  double t0 = now_ms();
  uint32_t v = rd(fd, 21);
  double second_ms = now_ms() - t0;
  pthread_join(t, NULL);
  printf("second_value=%u second_ms=%.0f\n", v, second_ms);
  return 0;
}

static int usage(const char* why) {
  fprintf(stderr,
          "ctrl_guest: %s\nusage: ctrl_guest basic | wait | many_waiters | fds | exec_child N | "
          "scm_rights | nondevice | badptr | rewrite | signal | paths | churn | host_node A B | "
          "crash_victim ARG | held_first ARG\n",
          why);
  return 2;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) return usage("missing MODE");
  const char* m = argv[1];
  if (!strcmp(m, "basic")) return mode_basic();
  if (!strcmp(m, "wait")) return mode_wait();
  if (!strcmp(m, "many_waiters")) return mode_many_waiters();
  if (!strcmp(m, "fds")) return mode_fds(argv[0]);
  if (!strcmp(m, "exec_child") && argc > 2) return mode_exec_child(atoi(argv[2]));
  if (!strcmp(m, "scm_rights")) return mode_scm_rights();
  if (!strcmp(m, "nondevice")) return mode_nondevice();
  if (!strcmp(m, "badptr")) return mode_badptr();
  if (!strcmp(m, "rewrite")) return mode_rewrite();
  if (!strcmp(m, "signal")) return mode_signal();
  if (!strcmp(m, "paths")) return mode_paths();
  if (!strcmp(m, "churn")) return mode_churn();
  if (!strcmp(m, "host_node") && argc > 3) return mode_host_node(argv[2], argv[3]);
  if (!strcmp(m, "crash_victim") && argc > 2) return mode_crash_victim(argv[2]);
  if (!strcmp(m, "held_first") && argc > 2) return mode_held_first(argv[2]);
  fprintf(stderr, "ctrl_guest: unknown mode, or its arguments missing: %s\n", m);
  return usage("bad arguments");
}
