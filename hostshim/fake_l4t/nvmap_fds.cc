// nvmap handles as r32.7.4 has them: dma-buf fds of the caller (L4T-MAP-1). Each is an open of
// the fake's handle file (request.h, L4tCaller::OpenHandleFile) bound to a sim object; every fd
// of one object is a number for that one open file, as every fd nvmap_get_dmabuf_fd installs is
// the dma-buf's one file (GET_FD and FROM_FD: a dup in the caller), and the object's sim
// reference goes when that file's last fd closes. FREE is close (nvmap_ioctl_free).
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "abi/l4t/nvmap.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/unique_fd.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hm = abi::l4t::nvmap;

int NoFds(L4tCall& c) {
  NVS_LOG_LIMITED(spdlog::level::info,
                  "fake-l4t: {} returns or closes an fd, which this caller cannot take "
                  "(serve the program with `nvsentry fake-l4t DIR -- PROGRAM`): ENOTTY",
                  c.desc.name);
  return ENOTTY;
}

// The handle-file session behind the caller's `fd`, or null.
std::shared_ptr<Session> HandleFileOf(L4tCall& c, uint32_t fd) {
  if (fd > INT32_MAX) return nullptr;
  const uint64_t handle = c.req.caller.SessionOf(static_cast<int32_t>(fd));
  std::shared_ptr<Session> s = handle != 0 ? c.state.Find(handle) : nullptr;
  return s != nullptr && s->handle_file ? s : nullptr;
}

// Places the fake's copy `fd` (closed here) in the caller and writes its number at `at` in the
// argument: 0, or the errno to answer.
int Place(L4tCall& c, int fd, size_t at) {
  if (fd == -EOPNOTSUPP) return NoFds(c);
  if (fd < 0) return -fd;
  const UniqueFd own(fd);
  const int placed = c.req.caller.PlaceFd(fd, /*cloexec=*/true);  // nvmap_get_dmabuf_fd's
  if (placed < 0) return -placed;
  std::memcpy(c.arg.data() + at, &placed, sizeof placed);
  return 0;
}

}  // namespace

HandleObject::~HandleObject() { FreeNvmapObject(state, *backend, id); }

int ObjectOfDmabuf(L4tCall& c, uint32_t fd, uint32_t* id) {
  if (!c.state.handles_are_fds) {
    if (c.state.gpu.nvmap().Resolve(getpid(), fd) == nullptr) return EINVAL;
    *id = fd;
    return 0;
  }
  if (std::shared_ptr<Session> s = HandleFileOf(c, fd)) {
    absl::MutexLock l(&s->mu);
    if (s->object != nullptr) {
      *id = s->object->id;
      return 0;
    }
    return EINVAL;  // an open of the handle file that names nothing
  }
  return fd <= INT32_MAX && c.req.caller.IsOpenFd(static_cast<int32_t>(fd)) ? EINVAL : EBADF;
}

void AnswerCreateFd(L4tCall& c, uint32_t id, bool wide) {
  // Made in place: a copy's destructor would free the object.
  std::shared_ptr<HandleObject> object(new HandleObject{c.state, c.session.backend, id});
  uint64_t handle = 0;
  const int fd = c.req.caller.OpenHandleFile(&handle);
  std::shared_ptr<Session> s = fd >= 0 ? c.state.Find(handle) : nullptr;
  if (s != nullptr) {
    absl::MutexLock l(&s->mu);
    s->object = std::move(object);  // the file holds it from now on; an fd refused closes it
  }
  if (fd >= 0 && s == nullptr) {
    close(fd);
    return c.Answer(EIO);
  }
  c.Answer(Place(c, fd, wide ? 0 : offsetof(hm::CreateHandle, handle)));
}

// GET_FD takes `handle` (at 4) and answers `fd` (at 0); FROM_FD takes `fd` and answers `handle`.
// Both are a new fd of the same dma-buf; a number that is none answers dma_buf_get's errno.
void GetFdOrFromFd(L4tCall& c, bool from_fd) {
  if (!c.state.handles_are_fds) return NotServed(c);  // ids have no dma-buf fds
  uint32_t in = 0;
  std::memcpy(&in, c.arg.data() + (from_fd ? 0 : 4), sizeof in);
  uint32_t id = 0;
  if (const int e = ObjectOfDmabuf(c, in, &id); e != 0) return c.Answer(e);
  const int fd = c.req.caller.DupFd(static_cast<int32_t>(in), /*cloexec=*/true);
  c.Answer(Place(c, fd, from_fd ? 4 : 0));
}

// FREE (L4T-MAP-7): 0 is nothing; any other number is closed, whatever it is (sys_close).
void FreeFd(L4tCall& c) {
  if (c.req.arg == 0) return c.Answer(0);
  if (c.req.arg > INT32_MAX) return c.Answer(EBADF);
  const int r = c.req.caller.CloseFd(static_cast<int32_t>(c.req.arg));
  c.Answer(r == -EOPNOTSUPP ? NoFds(c) : -r);
}

}  // namespace nvsentry::hostshim::fake_l4t
