#include "hostshim/sim/memory/guest_read_batch.h"

#include <utility>

namespace nvsentry::hostshim::sim {

void GuestReadBatch::Add(const std::shared_ptr<GuestProcess>& process, uint64_t addr,
                         std::span<uint8_t> dst) {
  if (dst.empty()) return;
  Group* g = nullptr;
  for (Group& candidate : groups_) {
    if (candidate.process == process) {
      g = &candidate;
      break;
    }
  }
  if (g == nullptr) g = &groups_.emplace_back(Group{process, {}, {}});
  iovec l{dst.data(), dst.size()};
  iovec r{reinterpret_cast<void*>(addr), dst.size()};
  // A piece that continues the previous one on both sides extends it (a read that crossed
  // mappings of one object, say).
  if (!g->local.empty()) {
    iovec& pl = g->local.back();
    iovec& pr = g->remote.back();
    if (static_cast<uint8_t*>(pl.iov_base) + pl.iov_len == dst.data() &&
        reinterpret_cast<uint64_t>(pr.iov_base) + pr.iov_len == addr) {
      pl.iov_len += dst.size();
      pr.iov_len += dst.size();
      return;
    }
  }
  g->local.push_back(l);
  g->remote.push_back(r);
}

bool GuestReadBatch::Run() {
  std::vector<Group> groups;
  groups.swap(groups_);
  for (const Group& g : groups)
    if (!g.process->ReadV(g.local, g.remote)) return false;
  return true;
}

}  // namespace nvsentry::hostshim::sim
