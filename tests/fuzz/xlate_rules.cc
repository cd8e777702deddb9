#include "tests/fuzz/xlate_rules.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "abi/l4t/correspondence.h"
#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "abi/l4t/nvmap.h"

namespace nvsentry::fuzz {
namespace {

thread_local uint64_t pending_size = 0;  // CREATE_64's size, from before the call to after it

using abi::l4t::L4tNode;
namespace as = abi::l4t::nvgpu_as;
namespace ch = abi::l4t::nvgpu_channel;
namespace tsg = abi::l4t::nvgpu_tsg;
namespace map = abi::l4t::nvmap;
namespace ctrl = abi::l4t::nvhost_ctrl;

template <typename T>
T Read(std::span<const uint8_t> arg, size_t at = 0) {
  T v{};
  if (at + sizeof v <= arg.size()) std::memcpy(&v, arg.data() + at, sizeof v);
  return v;
}

// Codes r32.7.4 has in its headers but answers ENOTTY (docs/host-abi.md): a translation that
// sends them relies on something a real host never does.
bool AnswersEnotty(L4tNode node, uint32_t code) {
  if (node == L4tNode::kNvmap)
    return code == map::kFromId || code == map::kGetId || code == map::kParam;
  if (node == L4tNode::kNvhostGpu) return code == ch::kEventIdCtrl || code == ch::kSetTimeslice;
  return false;
}

bool NeedsTsg(uint32_t code) {
  switch (code) {
    case ch::kAllocGpfifo:
    case ch::kAllocGpfifoEx:
    case ch::kSetupBind:
    case ch::kAllocObjCtx:
    case ch::kSubmitGpfifo:
    case ch::kWait:
    case ch::kZcullBind: return true;
    default: return false;
  }
}

}  // namespace

void RuleBroken(const char* rule, const char* what, uint32_t code, uint64_t value) {
  std::fprintf(stderr, "xlate_fuzz: rule broken: %s: %s (code 0x%08X, value 0x%llx)\n", rule, what,
               code, static_cast<unsigned long long>(value));
  std::abort();
}

void XlateRules::GuestCall(pid_t tid, const abi::DeviceDesc* device, const abi::IoctlDesc* desc) {
  absl::MutexLock l(&mu_);
  guest_tid_ = tid;
  guest_device_ = device;
  guest_desc_ = desc;
}

size_t XlateRules::OpenOf(L4tNode node) const {
  absl::MutexLock l(&mu_);
  size_t n = 0;
  for (const auto& [fd, f] : fds_) n += f.node == node;
  return n;
}

void XlateRules::Opened(int fd, L4tNode node) {
  absl::MutexLock l(&mu_);
  fds_[fd] = Fd{.node = node};
}

void XlateRules::Closed(int fd) {
  absl::MutexLock l(&mu_);
  fds_.erase(fd);
}

void XlateRules::Duplicated(int from, int to, L4tNode node) {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(from);
  if (it == fds_.end()) RuleBroken("in-process fake", "dup3 of an fd the rules never saw", 0, from);
  fds_[to] = it->second;
}

bool XlateRules::IsFd(uint32_t fd, L4tNode node) const {
  auto it = fds_.find(static_cast<int>(fd));
  return it != fds_.end() && it->second.node == node;
}

bool XlateRules::LiveHandle(uint32_t handle) const {
  for (const auto& [fd, f] : fds_)
    if (f.handles.contains(handle)) return true;
  return false;
}

bool XlateRules::OwnedSyncpoint(uint32_t id) const {
  for (const auto& [fd, f] : fds_)
    if (f.syncpoint == id) return true;
  return false;
}

void XlateRules::CheckPointers(const abi::IoctlDesc& desc, uint32_t code,
                               std::span<const uint8_t> arg) const {
  for (const abi::UserPtrDesc& p : desc.user_ptrs) {
    const uint64_t ptr = Read<uint64_t>(arg, p.ptr);
    if (ptr >= guest_begin_ && ptr < guest_end_)
      RuleBroken("user pointers", "a user pointer names the guest's memory", code, ptr);
  }
}

void XlateRules::CheckFdsAndHandles(int fd, L4tNode node, uint32_t code,
                                    std::span<const uint8_t> arg, uint64_t value) {
  auto handle = [&](uint32_t h, const char* what) {
    if (!LiveHandle(h)) RuleBroken("L4T-NODE-8", what, code, h);
  };
  switch (node) {
    case L4tNode::kNvhostAsGpu:
      if (code == as::kBindChannel && !IsFd(Read<uint32_t>(arg), L4tNode::kNvhostGpu))
        RuleBroken("L4T-NODE-8", "AS BIND_CHANNEL of no channel fd the sentry holds", code,
                   Read<uint32_t>(arg));
      if (code == as::kMapBufferEx) {
        const auto m = Read<as::MapBufferEx>(arg);
        if ((m.flags & as::kMapDirectKindCtrl) == 0)
          RuleBroken("L4T-AS-6", "MAP_BUFFER_EX without DIRECT_KIND_CTRL", code, m.flags);
        if ((m.flags & as::kMapFixedOffset) == 0 && (m.mapping_size != 0 || m.buffer_offset != 0))
          RuleBroken("L4T-AS-8", "anywhere MAP_BUFFER_EX with mapping_size or buffer_offset", code,
                     m.mapping_size | m.buffer_offset);
        handle(m.dmabuf_fd, "MAP_BUFFER_EX of no live nvmap handle");
      }
      break;
    case L4tNode::kTsg:
      if ((code == tsg::kBindChannel || code == tsg::kUnbindChannel) &&
          !IsFd(Read<uint32_t>(arg), L4tNode::kNvhostGpu))
        RuleBroken("L4T-NODE-8", "TSG (UN)BIND_CHANNEL of no channel fd the sentry holds", code,
                   Read<uint32_t>(arg));
      break;
    case L4tNode::kNvhostGpu: {
      if (NeedsTsg(code) && !fds_[fd].in_tsg)
        RuleBroken("L4T-TSG-2..5", "a setup call on a channel in no TSG", code, fd);
      if (code == ch::kSetNvmapFd && !IsFd(Read<uint32_t>(arg), L4tNode::kNvmap))
        RuleBroken("L4T-NODE-8", "SET_NVMAP_FD of no nvmap fd the sentry holds", code,
                   Read<uint32_t>(arg));
      if (code == ch::kSetErrorNotifier) {
        const auto n = Read<ch::SetErrorNotifier>(arg);
        if (n.mem == 0) RuleBroken("L4T-CH-12", "SET_ERROR_NOTIFIER with mem 0", code, 0);
        handle(n.mem, "SET_ERROR_NOTIFIER of no live nvmap handle");
      }
      if (code == ch::kWait && Read<ch::Wait>(arg).type == 1)
        handle(Read<ch::Wait>(arg).dmabuf_fd, "semaphore WAIT on no live nvmap handle");
      break;
    }
    case L4tNode::kNvmap:
      if (code == map::kAlloc || code == map::kWrite || code == map::kRead)
        handle(Read<uint32_t>(arg, code == map::kAlloc ? 0 : 8), "an nvmap call on no live handle");
      if (code == map::kCache) handle(Read<map::CacheOp>(arg).handle, "CACHE on no live handle");
      if (code == map::kFree) handle(static_cast<uint32_t>(value), "FREE of no live handle");
      break;
    case L4tNode::kNvhostCtrl:
      if (code == ctrl::kSyncptIncr && !OwnedSyncpoint(Read<uint32_t>(arg)))
        RuleBroken("syncpoints", "SYNCPT_INCR of a syncpoint no held channel's fence named", code,
                   Read<uint32_t>(arg));
      break;
    default: break;
  }
}

std::vector<XlateRules::EntryRead> XlateRules::EntriesOf(int fd, uint32_t code,
                                                         std::span<const uint8_t> arg) {
  const auto submit = Read<ch::SubmitGpfifo>(arg);
  std::vector<EntryRead> reads;
  const int as_fd = fds_[fd].as_fd;
  auto space = fds_.find(as_fd);
  uint64_t budget = 1u << 16;  // words read back per submission
  for (uint32_t i = 0; i < submit.num_entries && i < 4096; ++i) {
    ch::GpfifoEntry e;
    std::memcpy(&e, reinterpret_cast<const void*>(submit.gpfifo + i * sizeof e), sizeof e);
    const uint64_t va = (uint64_t{e.entry1 & 0xFF} << 32) | (e.entry0 & ~3u);
    const uint32_t words = (e.entry1 >> 10) & 0x1FFFFF;
    if (words == 0) continue;
    if (space == fds_.end()) RuleBroken("stream", "a submission on a channel in no AS", code, va);
    auto m = space->second.mappings.upper_bound(va);
    if (m == space->second.mappings.begin())
      RuleBroken("stream", "a GPFIFO entry outside every mapping reached the host", code, va);
    --m;
    if (va - m->first + uint64_t{words} * 4 > m->second.size)
      RuleBroken("stream", "a GPFIFO entry past its mapping's end reached the host", code, va);
    if (words > budget) break;
    budget -= words;
    int nvmap_fd = -1;
    for (const auto& [nfd, f] : fds_)
      if (f.handles.contains(m->second.handle)) nvmap_fd = nfd;
    reads.push_back({nvmap_fd, m->second.handle, m->second.buffer_offset + (va - m->first), words});
  }
  return reads;
}

void XlateRules::CheckStream(uint32_t code, const std::vector<EntryRead>& reads) {
  StreamRules rules{class_allowed_, [this](uint32_t id) {
                      absl::MutexLock l(&mu_);
                      return OwnedSyncpoint(id);
                    }};
  for (const EntryRead& r : reads) {
    std::vector<uint32_t> words(r.words);
    map::RwHandle rw{reinterpret_cast<uint64_t>(words.data()),
                     r.handle,
                     static_cast<uint32_t>(r.offset),
                     r.words * 4u,
                     r.words * 4u,
                     r.words * 4u,
                     1};
    if (r.offset > UINT32_MAX || ioctl(r.fd, map::kRead, &rw) != 0)
      RuleBroken("stream", "a GPFIFO entry's words cannot be read back from the host", code,
                 r.offset);
    if (std::optional<std::string> bad = ForbiddenInEntry(words, rules))
      RuleBroken("stream", bad->c_str(), code, r.handle);
  }
}

void XlateRules::Before(int fd, L4tNode node, uint32_t code, std::span<const uint8_t> arg,
                        uint64_t value) {
  host_calls_.fetch_add(1, std::memory_order_relaxed);
  const abi::IoctlDesc* desc = abi::l4t::FindL4tIoctl(node, code);
  if (desc == nullptr) RuleBroken("L4T-NODE-2", "a code the node's table does not have", code, fd);
  if (AnswersEnotty(node, code))
    RuleBroken("L4T-NODE-5", "a code r32.7.4 answers ENOTTY", code, fd);
  CheckPointers(*desc, code, arg);
  absl::ReleasableMutexLock l(&mu_);
  if (!fds_.contains(fd))
    RuleBroken("in-process fake", "an ioctl on an fd the rules never saw", code, fd);
  if (guest_desc_ != nullptr && guest_tid_ == gettid()) {
    const abi::l4t::Correspondence* c =
        abi::l4t::FindCorrespondence(guest_device_->id, guest_desc_->code);
    if (c != nullptr && c->plan == abi::l4t::HostPlan::kNotSupported)
      RuleBroken("correspondence", "a guest call without counterpart reached the host", code,
                 guest_desc_->code);
  }
  CheckFdsAndHandles(fd, node, code, arg, value);
  if (node == L4tNode::kNvmap && code == map::kCreate64) pending_size = Read<uint64_t>(arg);
  if (node != L4tNode::kNvhostGpu || code != ch::kSubmitGpfifo) return;
  std::vector<EntryRead> reads = EntriesOf(fd, code, arg);
  l.Release();
  CheckStream(code, reads);
}

void XlateRules::After(int fd, L4tNode node, uint32_t code, std::span<const uint8_t> arg,
                       uint64_t value, int err) {
  if (err != 0) return;
  absl::MutexLock l(&mu_);
  Record(fd, node, code, arg, value);
}

void XlateRules::Record(int fd, L4tNode node, uint32_t code, std::span<const uint8_t> arg,
                        uint64_t value) {
  Fd& f = fds_[fd];
  if (node == L4tNode::kNvmap && code == map::kCreate)
    handle_size_[Read<uint32_t>(arg, 4)] = Read<uint32_t>(arg);
  if (node == L4tNode::kNvmap && code == map::kCreate64)
    handle_size_[Read<uint32_t>(arg)] = pending_size;
  if (node == L4tNode::kNvhostAsGpu && code == as::kBindChannel) {
    auto it = fds_.find(static_cast<int>(Read<uint32_t>(arg)));
    if (it != fds_.end()) it->second.as_fd = fd;
  }
  if (node == L4tNode::kNvhostAsGpu && code == as::kMapBufferEx) {
    const auto m = Read<as::MapBufferEx>(arg);
    const uint64_t size =
        m.mapping_size != 0 ? m.mapping_size : handle_size_[m.dmabuf_fd] - m.buffer_offset;
    f.mappings[m.offset] = {m.dmabuf_fd, m.buffer_offset, size};
  }
  if (node == L4tNode::kNvhostAsGpu && code == as::kUnmapBuffer)
    f.mappings.erase(Read<uint64_t>(arg));
  if (node == L4tNode::kNvmap && (code == map::kCreate || code == map::kCreate64))
    f.handles[Read<uint32_t>(arg, code == map::kCreate ? 4 : 0)] += 1;
  if (node == L4tNode::kNvmap && code == map::kFree) {
    for (auto& [nfd, n] : fds_) {
      auto it = n.handles.find(static_cast<uint32_t>(value));
      if (it == n.handles.end()) continue;
      if (--it->second == 0) n.handles.erase(it);
      break;
    }
  }
  if (node == L4tNode::kTsg && (code == tsg::kBindChannel || code == tsg::kUnbindChannel)) {
    auto it = fds_.find(Read<int32_t>(arg));
    if (it != fds_.end()) it->second.in_tsg = code == tsg::kBindChannel;
  }
  if (node == L4tNode::kNvhostGpu && code == ch::kSubmitGpfifo) {
    const auto s = Read<ch::SubmitGpfifo>(arg);
    if ((s.flags & 2u) != 0 && (s.flags & 8u) == 0) f.syncpoint = s.fence.id;  // FENCE_GET
  }
}

void XlateRules::StaleFd(int fd, uint32_t code) {
  RuleBroken("L4T-NODE-8", "an L4T call on a host fd the sentry closed", code, fd);
}

}  // namespace nvsentry::fuzz
