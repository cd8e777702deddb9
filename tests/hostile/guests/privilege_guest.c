/* A hostile guest that tries what only a privileged process may do to the host, and reports each
 * result as key=RC/ERRNO (RC 0: it worked):
 *   write      create a file in DIR (given: a root-owned 0700 directory outside the sandbox)
 *   set_tid    clone3 a child with host pid HOSTPID (set_tid for both PID namespaces)
 *   init_module, finit_module   load a kernel module (an empty image)
 *   devmem     open /dev/mem;  kmsg: open /dev/kmsg (root's 0644) for writing
 *   rlimit     raise its RLIMIT_NOFILE hard limit again (CAP_SYS_RESOURCE over the host)
 *   nice       raise its own priority (CAP_SYS_NICE over the host)
 *   ro_clone   clone its read-only /dev with the read-only flag cleared (open_tree_attr, Linux
 *              6.15), then ro_write: create a file through the clone
 *   fspick     pick /dev's filesystem for reconfiguration
 *   uffd_kernel  a userfaultfd that also holds the kernel's own faults on its pages (a sentry
 *              thread reading the guest's memory would wait on the guest); uffd_user: one for
 *              the guest's own faults only (UFFD_USER_MODE_ONLY)
 * plus nnp=PR_GET_NO_NEW_PRIVS, uid=getuid() and own_userns (1: its user namespace is not its
 * init's, so every mount it inherited is locked). Usage: privilege_guest DIR HOSTPID */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char* key, long rc) {
  printf("%s=%ld/%d ", key, rc < 0 ? -1L : 0L, rc < 0 ? errno : 0);
}

static long try_set_tid(pid_t host_pid) {
  /* set_tid[0] is the pid in the innermost namespace (the guest's), set_tid[1] in its parent. */
  pid_t tids[2] = {4242, host_pid};
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  args.set_tid = (uint64_t)(uintptr_t)tids;
  args.set_tid_size = 2;
  long rc = syscall(SYS_clone3, &args, sizeof args);
  if (rc == 0) _exit(0);
  if (rc > 0) {
    waitpid((pid_t)rc, NULL, 0);
    return 0;
  }
  return rc;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: privilege_guest DIR HOSTPID\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/planted-by-guest", argv[1]);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  report("write", fd);
  if (fd >= 0) close(fd);

  report("set_tid", try_set_tid((pid_t)atoi(argv[2])));

  report("init_module", syscall(SYS_init_module, "", 0UL, ""));
  int null = open("/dev/null", O_RDONLY);
  report("finit_module", syscall(SYS_finit_module, null, "", 0));

  fd = open("/dev/mem", O_RDONLY);
  report("devmem", fd);
  if (fd >= 0) close(fd);
  fd = open("/dev/kmsg", O_WRONLY);
  report("kmsg", fd);
  if (fd >= 0) close(fd);

  /* Lowering a hard limit is free; raising it back takes CAP_SYS_RESOURCE over the host. */
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rlim_t hard = rl.rlim_max;
  rl.rlim_max = hard - 1;
  if (rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_max = hard;
  report("rlimit", setrlimit(RLIMIT_NOFILE, &rl));
  report("nice", setpriority(PRIO_PROCESS, 0, -5));

  /* <linux/mount.h>'s struct mount_attr; open_tree_attr is 467 on every architecture. */
  struct {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
  } attr = {0, 0x1 /* MOUNT_ATTR_RDONLY */, 0, 0};
  long clone =
      syscall(467, AT_FDCWD, "/dev", 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC, &attr, sizeof attr);
  report("ro_clone", clone);
  fd = clone >= 0 ? openat((int)clone, "planted-by-guest", O_WRONLY | O_CREAT, 0644) : -1;
  if (clone < 0) errno = EBADF;
  report("ro_write", fd);
  report("fspick", syscall(SYS_fspick, AT_FDCWD, "/dev", 1 /* FSPICK_CLOEXEC */));
  {
    long u = syscall(SYS_userfaultfd, O_CLOEXEC);
    report("uffd_kernel", u);
    if (u >= 0) close((int)u);
    u = syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
    report("uffd_user", u);
    if (u >= 0) close((int)u);
  }

  /* Its user namespace's map: "0 0 1" over its init's (which it may not look at itself). */
  FILE* f = fopen("/proc/self/uid_map", "re");
  unsigned inside = 1, outside = 1, count = 0;
  if (f != NULL) {
    if (fscanf(f, "%u %u %u", &inside, &outside, &count) != 3) count = 0;
    fclose(f);
  }
  printf("own_userns=%d ", inside == 0 && outside == 0 && count == 1);
  printf("nnp=%d uid=%d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), (int)getuid());
  return 0;
}
