// The FUSE-over-io_uring ioctl round trip on this machine: could the kernel copy a device
// ioctl's argument for the sentry, with no seccomp stop, kcmp or process_vm_* call, at the cost
// of the seccomp-notify round trip? (docs/benchmarks.md, "FUSE over io_uring is no way to the
// floor either".) A FUSE filesystem with one file served over io_uring (Linux 6.14+, one queue per
// CPU, each served by a thread pinned to its CPU, as the kernel routes a request to the queue of
// the caller's CPU), and a child that makes restricted ioctls (_IOWR, 4 bytes in and out) on it,
// 5 timed blocks. The struct layouts are the kernel's uapi (include/uapi/linux/fuse.h, 7.42+),
// which Debian's <linux/fuse.h> predates. Root only, and only where the fuse module's
// enable_uring parameter is Y (off by default; a host setting):
//   echo Y > /sys/module/fuse/parameters/enable_uring; bench/fuse_uring_probe [CALLS]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OVER_IO_URING (1ULL << 41)
struct ent_in_out {
  uint64_t flags, commit_id;
  uint32_t payload_sz, padding;
  uint64_t reserved;
};
struct req_header {
  char in_out[128];
  char op_in[128];
  struct ent_in_out ent;
};
struct cmd_req {
  uint64_t flags, commit_id;
  uint16_t qid;
  uint8_t padding[6];
};
enum { CMD_REGISTER = 1, CMD_COMMIT_AND_FETCH = 2 };

static int fusefd;
static volatile int done;
static const char* dir;  // the mount point
#define NENT 2
#define PAYLOAD 65536

struct ring {
  int fd;
  unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe* sqes;
  struct io_uring_cqe* cqes;
};
static int ring_init(struct ring* r, unsigned entries) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = IORING_SETUP_SQE128 | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  r->fd = syscall(SYS_io_uring_setup, entries, &p);
  if (r->fd < 0) {
    perror("io_uring_setup");
    return -1;
  }
  size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (cqsz > sqsz) sqsz = cqsz;
  char* sq =
      mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  char* cq = sq;
  r->sq_head = (unsigned*)(sq + p.sq_off.head);
  r->sq_tail = (unsigned*)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned*)(sq + p.sq_off.ring_mask);
  r->sq_array = (unsigned*)(sq + p.sq_off.array);
  r->cq_head = (unsigned*)(cq + p.cq_off.head);
  r->cq_tail = (unsigned*)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned*)(cq + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe*)(cq + p.cq_off.cqes);
  r->sqes = mmap(0, p.sq_entries * 128, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                 IORING_OFF_SQES);
  return 0;
}
static struct io_uring_sqe* get_sqe(struct ring* r) {
  unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
  struct io_uring_sqe* s = (struct io_uring_sqe*)((char*)r->sqes + idx * 128);
  memset(s, 0, 128);
  r->sq_array[idx] = idx;
  __atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
  return s;
}

struct entry {
  struct req_header hdr;
  char payload[PAYLOAD];
  struct iovec iov[2];
  int idx;
};
struct queue {
  int qid;
  struct ring r;
  struct entry ents[NENT];
};

static void prep(struct queue* q, struct entry* e, int op, uint64_t commit) {
  struct io_uring_sqe* s = get_sqe(&q->r);
  s->opcode = IORING_OP_URING_CMD;
  s->fd = fusefd;
  s->cmd_op = op;
  e->iov[0].iov_base = &e->hdr;
  e->iov[0].iov_len = sizeof e->hdr;
  e->iov[1].iov_base = e->payload;
  e->iov[1].iov_len = PAYLOAD;
  s->addr = (uint64_t)(uintptr_t)e->iov;
  s->len = 2;
  s->user_data = e->idx;
  struct cmd_req* c = (struct cmd_req*)s->cmd;
  c->qid = q->qid;
  c->commit_id = commit;
}

// Node 1 is the root directory, node 2 the file.
static void fill_attr(struct fuse_attr* a, uint64_t node) {
  a->ino = node;
  a->mode = node == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0666);
  a->nlink = 1;
}

static uint64_t calls;
static void handle(struct queue* q, struct entry* e) {
  struct fuse_in_header* in = (struct fuse_in_header*)e->hdr.in_out;
  struct fuse_out_header out;
  memset(&out, 0, sizeof out);
  out.unique = in->unique;
  uint32_t psz = 0;
  switch (in->opcode) {
    case FUSE_LOOKUP: {  // the one file, node 2, whatever its name
      struct fuse_entry_out eo;
      memset(&eo, 0, sizeof eo);
      eo.nodeid = 2;
      eo.entry_valid = eo.attr_valid = 1000;
      fill_attr(&eo.attr, 2);
      memcpy(e->payload, &eo, sizeof eo);
      psz = sizeof eo;
      break;
    }
    case FUSE_GETATTR: {
      struct fuse_attr_out ao;
      memset(&ao, 0, sizeof ao);
      ao.attr_valid = 1000;
      fill_attr(&ao.attr, in->nodeid);
      memcpy(e->payload, &ao, sizeof ao);
      psz = sizeof ao;
      break;
    }
    case FUSE_OPEN: {
      struct fuse_open_out oo;
      memset(&oo, 0, sizeof oo);
      oo.fh = 7;
      oo.open_flags = FOPEN_DIRECT_IO;
      memcpy(e->payload, &oo, sizeof oo);
      psz = sizeof oo;
      break;
    }
    case FUSE_IOCTL: {
      struct fuse_ioctl_in* ii = (struct fuse_ioctl_in*)e->hdr.op_in;
      uint32_t v;
      memcpy(&v, e->payload, 4);
      v += 1;
      struct fuse_ioctl_out io;
      memset(&io, 0, sizeof io);
      memcpy(e->payload, &io, sizeof io);
      memcpy(e->payload + sizeof io, &v, 4);
      psz = sizeof io + (ii->out_size < 4 ? ii->out_size : 4);
      calls++;
      break;
    }
    case FUSE_FLUSH:
    case FUSE_RELEASE: psz = 0; break;
    default: out.error = -ENOSYS; break;
  }
  out.len = sizeof out + psz;
  memcpy(e->hdr.in_out, &out, sizeof out);
  e->hdr.ent.payload_sz = psz;
  prep(q, e, CMD_COMMIT_AND_FETCH, e->hdr.ent.commit_id);
}

static void* queue_thread(void* arg) {
  struct queue* q = arg;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(q->qid, &s);
  sched_setaffinity(0, sizeof s, &s);
  if (ring_init(&q->r, 8)) exit(1);
  for (int i = 0; i < NENT; i++) {
    q->ents[i].idx = i;
    prep(q, &q->ents[i], CMD_REGISTER, 0);
  }
  int n = syscall(SYS_io_uring_enter, q->r.fd, NENT, 0, 0, NULL, 0);
  if (n < 0) {
    perror("enter register");
    exit(1);
  }
  for (;;) {
    unsigned tosubmit = *q->r.sq_tail - *q->r.sq_head;
    int rc = syscall(SYS_io_uring_enter, q->r.fd, tosubmit, 1, IORING_ENTER_GETEVENTS, NULL, 0);
    if (rc < 0 && errno != EINTR) {
      perror("enter");
      exit(1);
    }
    unsigned head = *q->r.cq_head;
    while (head != __atomic_load_n(q->r.cq_tail, __ATOMIC_ACQUIRE)) {
      struct io_uring_cqe* c = &q->r.cqes[head & *q->r.cq_mask];
      if (c->res < 0) {
        if (done) pause();  // the filesystem is going: ENOTCONN
        fprintf(stderr, "queue %d: %s%s\n", q->qid, strerror(-c->res),
                c->res == -EOPNOTSUPP ? " (is /sys/module/fuse/parameters/enable_uring Y?)" : "");
        umount2(dir, MNT_DETACH);
        rmdir(dir);
        exit(1);
      }
      handle(q, &q->ents[c->user_data]);
      head++;
    }
    __atomic_store_n(q->r.cq_head, head, __ATOMIC_RELEASE);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 1) {
    fprintf(stderr, "fuse_uring_probe: takes no arguments, not '%s'\nusage: fuse_uring_probe\n",
            argv[1]);
    return 2;
  }
  char dir_template[] = "/tmp/fuse-uring-probe-XXXXXX";
  dir = mkdtemp(dir_template);
  if (dir == NULL) {
    perror("mkdtemp");
    return 1;
  }
  fusefd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  char opts[128];
  snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fusefd);
  if (fusefd < 0 || mount("fuse-uring-probe", dir, "fuse", MS_NOSUID | MS_NODEV, opts)) {
    perror("mounting a FUSE filesystem (root only)");
    return 1;
  }
  // INIT through /dev/fuse.
  static char buf[1 << 20];
  if (read(fusefd, buf, sizeof buf) <
      (ssize_t)(sizeof(struct fuse_in_header) + sizeof(struct fuse_init_in))) {
    perror("reading FUSE_INIT");
    return 1;
  }
  struct fuse_in_header* ih = (struct fuse_in_header*)buf;
  struct fuse_init_in* ii = (struct fuse_init_in*)(buf + sizeof *ih);
  struct {
    struct fuse_out_header h;
    struct fuse_init_out o;
  } r;
  memset(&r, 0, sizeof r);
  r.h.unique = ih->unique;
  r.h.len = sizeof r;
  r.o.major = 7;
  r.o.minor = ii->minor;
  r.o.max_write = 65536;
  r.o.max_pages = 16;
  r.o.flags = FUSE_INIT_EXT | FUSE_MAX_PAGES;
  r.o.flags2 = (uint32_t)(OVER_IO_URING >> 32);
  if (write(fusefd, &r, sizeof r) != sizeof r) {
    perror("init reply");
    return 1;
  }
  int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  static struct queue qs[64];
  pthread_t t;
  for (int i = 0; i < ncpu; i++) {
    qs[i].qid = i;
    pthread_create(&t, 0, queue_thread, &qs[i]);
  }
  usleep(200000);
  long N = argc > 1 ? atol(argv[1]) : 100000;
  pid_t c = fork();
  if (c == 0) {
    char path[64];
    snprintf(path, sizeof path, "%s/dev", dir);
    int fd = open(path, O_RDWR);
    if (fd < 0) {
      perror("client open");
      _exit(1);
    }
    unsigned cmd = _IOWR(0, 0x14, uint32_t);
    uint32_t v = 0;
    for (int i = 0; i < 2000; i++)
      if (ioctl(fd, cmd, &v)) {
        perror("ioctl");
        _exit(1);
      }
    for (int round = 0; round < 5; round++) {
      double t0 = now();
      for (long i = 0; i < N; i++) ioctl(fd, cmd, &v);
      fprintf(stderr, "fuse-uring ioctl: %.0f ns/call (v=%u)\n", (now() - t0) / N, v);
    }
    _exit(0);
  }
  int st;
  waitpid(c, &st, 0);
  done = 1;
  umount2(dir, MNT_DETACH);
  rmdir(dir);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
