// Reads of guest memory collected from many places (the pieces of many GPU reads) and made
// together: one GuestProcess::ReadV per process, so one liveness check before and one after, and
// one process_vm_readv per IOV_MAX pieces, however many pieces there are. Each process's
// guarantees are GuestProcess's: bytes of a process that exited meanwhile are never reported as
// read.
//
// Not thread-safe; the destinations must stay valid until Run returns.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hostshim/sim/memory/guest_process.h"

namespace nvsentry::hostshim::sim {

class GuestReadBatch {
 public:
  // Reads dst.size() bytes at `addr` in `process` into dst when Run is called.
  void Add(const std::shared_ptr<GuestProcess>& process, uint64_t addr, std::span<uint8_t> dst);
  // Makes every read added so far; true when each read all its bytes (the batch is empty after).
  bool Run();

 private:
  struct Group {
    std::shared_ptr<GuestProcess> process;
    std::vector<iovec> local, remote;
  };
  std::vector<Group> groups_;  // usually one: a channel's pushbuffers come from one guest
};

}  // namespace nvsentry::hostshim::sim
