#include "hostshim/sim/host1x/host1x_channel.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kAddressEnd = 1ull << 32;
// Command buffers one Run() starts before it lets other channels have the thread.
constexpr int kCmdbufsPerRun = 16;
constexpr uint32_t kWordsPerRun = 1u << 16;

uint64_t PageUp(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

}  // namespace

// What the command processor reaches: the channel's mappings and the syncpoints.
class Host1xChannel::Env : public Host1xEnv {
 public:
  explicit Env(Host1xChannel& c) : c_(c) {}
  bool Fetch(uint32_t addr, uint32_t words, std::vector<uint32_t>* out, std::string* why) override {
    std::shared_ptr<NvmapObject> object;
    uint64_t offset = 0;
    const uint64_t bytes = uint64_t{words} * 4;
    {
      absl::MutexLock l(&c_.mu_);
      auto it = c_.by_address_.upper_bound(addr);
      if (it != c_.by_address_.begin()) {
        --it;
        offset = addr - it->first;
        if (offset <= it->second.size && bytes <= it->second.size - offset)
          object = it->second.object;
      }
    }
    if (!object) {
      *why = absl::StrCat("GATHER of ", words, " words at 0x", absl::Hex(addr),
                          " is not inside a mapped buffer");
      return false;
    }
    out->resize(words);
    if (!object->Read(offset, {reinterpret_cast<uint8_t*>(out->data()), bytes})) {
      *why = absl::StrCat("GATHER at 0x", absl::Hex(addr), ": the buffer's memory is gone");
      return false;
    }
    return true;
  }
  abi::NvError IncrementSyncpoint(uint32_t id) override {
    return c_.syncpoints_.IncrementFromCommandStream(id);
  }
  uint32_t ReadSyncpoint(uint32_t id) override { return c_.syncpoints_.Read(id); }

 private:
  Host1xChannel& c_;
};

class Host1xChannel::Requeue : public SyncpointWaiter {
 public:
  Requeue(std::weak_ptr<Host1xChannel> c, uint64_t epoch) : c_(std::move(c)), epoch_(epoch) {}
  void Reached(uint32_t) override {
    if (auto c = c_.lock()) c->Unblock(epoch_);
  }
  void TimedOut() override { Reached(0); }
  bool Abandoned() override {
    auto c = c_.lock();
    return !c || c->epoch() != epoch_;
  }

 private:
  std::weak_ptr<Host1xChannel> c_;
  uint64_t epoch_;
};

uint32_t Host1xChannel::FindAddressLocked(uint64_t size) const {
  size = PageUp(size);
  uint64_t cursor = kFirstAddress;
  for (const auto& [addr, m] : by_address_) {
    if (addr >= cursor && addr - cursor >= size) return static_cast<uint32_t>(cursor);
    cursor = std::max(cursor, PageUp(uint64_t{addr} + m.size));
  }
  if (cursor < kAddressEnd && kAddressEnd - cursor >= size) return static_cast<uint32_t>(cursor);
  return 0;
}

abi::NvError Host1xChannel::Map(uint32_t handle, std::shared_ptr<NvmapObject> object,
                                uint32_t* address) {
  absl::MutexLock l(&mu_);
  if (auto h = by_handle_.find(handle); h != by_handle_.end()) {
    Mapping& m = by_address_.at(h->second);
    if (m.object == object) {
      if (m.refs >= kMaxMapRefs) return abi::NvError::kInsufficientMemory;
      ++m.refs;
      *address = h->second;
      return abi::NvError::kSuccess;
    }
    // The handle names another object now (freed and its id reused): the old mapping stays
    // for the jobs that pin it, unreachable by handle.
    if (m.refs != 0) return abi::NvError::kBadValue;
    by_handle_.erase(h);
  }
  if (by_address_.size() >= kMaxMappings) return abi::NvError::kInsufficientMemory;
  const uint32_t addr = FindAddressLocked(object->size());
  if (addr == 0) return abi::NvError::kInsufficientMemory;
  const uint64_t size = PageUp(object->size());
  by_address_.emplace(addr, Mapping{handle, std::move(object), size, 1, 0});
  by_handle_[handle] = addr;
  *address = addr;
  return abi::NvError::kSuccess;
}

abi::NvError Host1xChannel::Unmap(uint32_t handle) {
  absl::MutexLock l(&mu_);
  auto h = by_handle_.find(handle);
  if (h == by_handle_.end()) return abi::NvError::kBadValue;
  Mapping& m = by_address_.at(h->second);
  if (m.refs == 0) return abi::NvError::kBadValue;
  --m.refs;
  DropIfUnusedLocked(h->second);
  return abi::NvError::kSuccess;
}

bool Host1xChannel::Mapped(uint32_t handle) const { return AddressOf(handle) != 0; }

uint32_t Host1xChannel::AddressOf(uint32_t handle) const {
  absl::MutexLock l(&mu_);
  auto h = by_handle_.find(handle);
  if (h == by_handle_.end() || by_address_.at(h->second).refs == 0) return 0;
  return h->second;
}

void Host1xChannel::DropIfUnusedLocked(uint32_t address) {
  auto it = by_address_.find(address);
  if (it == by_address_.end() || it->second.refs != 0 || it->second.pins != 0) return;
  if (auto h = by_handle_.find(it->second.handle); h != by_handle_.end() && h->second == address)
    by_handle_.erase(h);
  by_address_.erase(it);
}

void Host1xChannel::UnpinLocked(const std::vector<uint32_t>& pinned) {
  for (uint32_t addr : pinned) {
    auto it = by_address_.find(addr);
    if (it == by_address_.end()) continue;
    --it->second.pins;
    DropIfUnusedLocked(addr);
  }
}

abi::NvError Host1xChannel::Submit(Host1xJob job, std::vector<Host1xFence>* fences) {
  std::sort(job.relocs.begin(), job.relocs.end(), [](const Host1xReloc& a, const Host1xReloc& b) {
    return std::pair(a.cmdbuf, a.word) < std::pair(b.cmdbuf, b.word);
  });
  bool schedule;
  {
    absl::MutexLock l(&mu_);
    if (failed_ || closed_) return abi::NvError::kTimeout;
    if (jobs_.size() >= kMaxPendingJobs) return abi::NvError::kBusy;
    const uint64_t bytes = sizeof(Host1xJob) + job.cmdbufs.capacity() * sizeof(Host1xCmdbuf) +
                           job.relocs.capacity() * (sizeof(Host1xReloc) + sizeof(uint32_t)) +
                           job.fences.capacity() * sizeof(Host1xFence);
    if (budget_ && budget_->Charge(BudgetKind::kQueuedBytes, bytes) != abi::NvError::kSuccess)
      return abi::NvError::kBusy;
    job.charged = budget_ ? bytes : 0;
    // A reference to an unmapped buffer below gives the charge back.
    auto refuse = [&](abi::NvError e) {
      if (job.charged != 0) budget_->Release(BudgetKind::kQueuedBytes, job.charged);
      return e;
    };
    for (Host1xReloc& r : job.relocs) {
      auto h = by_handle_.find(r.target);
      if (h == by_handle_.end() || by_address_.at(h->second).refs == 0)
        return refuse(abi::NvError::kBadParameter);
      r.value = (h->second + r.target_offset) >> r.shift;
      job.pinned.push_back(h->second);
    }
    std::sort(job.pinned.begin(), job.pinned.end());
    job.pinned.erase(std::unique(job.pinned.begin(), job.pinned.end()), job.pinned.end());
    for (uint32_t addr : job.pinned) ++by_address_.at(addr).pins;
    for (Host1xFence& f : job.fences) f.threshold = syncpoints_.IncrementMax(f.id, f.increments);
    *fences = job.fences;
    jobs_.push_back(std::make_shared<const Host1xJob>(std::move(job)));
    schedule = jobs_.size() == 1 && !blocked_;
  }
  if (schedule) runlist_.Schedule(shared_from_this());
  return abi::NvError::kSuccess;
}

bool Host1xChannel::LoadCmdbuf(const Host1xJob& job, size_t i, std::vector<uint32_t>* words,
                               std::string* why) {
  const Host1xCmdbuf& c = job.cmdbufs[i];
  const uint64_t bytes = uint64_t{c.words} * 4;
  words->resize(c.words);
  if (uint64_t{c.offset} > c.object->size() || bytes > c.object->size() - c.offset) {
    *why = absl::StrCat("command buffer ", i, " (handle 0x", absl::Hex(c.handle), ", offset 0x",
                        absl::Hex(c.offset), ", ", c.words, " words) runs past its 0x",
                        absl::Hex(c.object->size()), "-byte object");
    return false;
  }
  if (!c.object->Read(c.offset, {reinterpret_cast<uint8_t*>(words->data()), bytes})) {
    *why = absl::StrCat("command buffer ", i, " (handle 0x", absl::Hex(c.handle),
                        "): its memory cannot be read");
    return false;
  }
  auto r = std::lower_bound(job.relocs.begin(), job.relocs.end(), i,
                            [](const Host1xReloc& x, size_t cmdbuf) { return x.cmdbuf < cmdbuf; });
  for (; r != job.relocs.end() && r->cmdbuf == i; ++r) (*words)[r->word] = r->value;
  return true;
}

uint64_t Host1xChannel::epoch() const {
  absl::MutexLock l(&mu_);
  return epoch_;
}

void Host1xChannel::Unblock(uint64_t epoch) {
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_ || !blocked_) return;
    blocked_ = false;
  }
  runlist_.Schedule(shared_from_this());
}

bool Host1xChannel::BlockOn(uint64_t epoch, uint32_t id, uint32_t thresh) {
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_) return true;
    blocked_ = true;  // before registering: the waiter may fire before Wait returns
  }
  uint32_t value;
  auto start = syncpoints_.Wait(
      id, thresh, -1, [&] { return std::make_shared<Requeue>(weak_from_this(), epoch); }, &value);
  if (start == Syncpoints::WaitStart::kParked) return true;
  absl::MutexLock l(&mu_);
  if (epoch == epoch_) blocked_ = false;
  return false;
}

void Host1xChannel::FinishFrontJob(uint64_t epoch, const Host1xJob& job) {
  // The increments the submit promised and the stream did not make (the engines' own work,
  // which is not simulated, would have made them).
  // All at once: a submit may promise 2^24 of them, which one at a time held an engine thread
  // for seconds (each one completing the syncpoint's waiters).
  for (const Host1xFence& f : job.fences) {
    const int32_t missing = static_cast<int32_t>(f.threshold - syncpoints_.Read(f.id));
    if (missing > 0)
      syncpoints_.IncrementBy(f.id, std::min(static_cast<uint32_t>(missing), f.increments));
  }
  std::string line;
  if (note_) {
    uint64_t words = 0;
    for (const Host1xCmdbuf& c : job.cmdbufs) words += c.words;
    line = absl::StrCat(
        "host1x ", Host1xClassName(engine_class_), " SUBMIT done: ", job.cmdbufs.size(),
        " command buffer", job.cmdbufs.size() == 1 ? "" : "s", ", ", words, " words; ",
        cp_.tally().empty() ? "nothing written" : cp_.tally().Summary(engine_class_));
  }
  // The record goes out whatever became of the channel meanwhile (closed, reset): the job ran to
  // its end, and a guest that closed the channel right after its fence must still see it traced.
  if (note_) (*note_)(job.tid, line);
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_ || jobs_.empty()) {
      cp_.ClearTally();
      return;
    }
    UnpinLocked(jobs_.front()->pinned);
    ReleaseQueued(*jobs_.front());
    jobs_.pop_front();
    ++jobs_done_;
    engine_methods_ = cp_.engine_methods();
    done_.Merge(cp_.tally());
  }
  cp_.ClearTally();
}

std::vector<uint32_t> Host1xChannel::DropAllLocked() {
  std::vector<uint32_t> ids;
  for (const auto& j : jobs_) {
    for (const Host1xFence& f : j->fences) ids.push_back(f.id);
    UnpinLocked(j->pinned);
    ReleaseQueued(*j);
  }
  jobs_.clear();
  ++epoch_;
  blocked_ = false;
  return ids;
}

void Host1xChannel::Fail(std::string why) {
  std::vector<uint32_t> ids;
  pid_t tid = 0;
  {
    absl::MutexLock l(&mu_);
    if (failed_) return;
    if (!jobs_.empty()) tid = jobs_.front()->tid;
    failed_ = true;
    error_ = why;
    ids = DropAllLocked();
  }
  // A guest can stop channels at will (open, submit a bad stream, repeat): rate-limited, as the
  // GPU channels' line is.
  NVS_LOG_LIMITED(spdlog::level::warn, "host1x channel stopped: {}", why);
  for (uint32_t id : ids) syncpoints_.SetMinEqMax(id);
  if (note_)
    (*note_)(tid,
             absl::StrCat("host1x ", Host1xClassName(engine_class_), " channel stopped: ", why));
}

Host1xChannel::~Host1xChannel() {
  absl::MutexLock l(&mu_);
  for (const auto& j : jobs_) ReleaseQueued(*j);
}

void Host1xChannel::ReleaseQueued(const Host1xJob& job) {
  if (budget_ && job.charged != 0) budget_->Release(BudgetKind::kQueuedBytes, job.charged);
}

void Host1xChannel::Close() {
  std::vector<uint32_t> ids;
  {
    absl::MutexLock l(&mu_);
    closed_ = true;
    ids = DropAllLocked();
  }
  for (uint32_t id : ids) syncpoints_.SetMinEqMax(id);
}

bool Host1xChannel::failed() const {
  absl::MutexLock l(&mu_);
  return failed_;
}
std::string Host1xChannel::error() const {
  absl::MutexLock l(&mu_);
  return error_;
}
size_t Host1xChannel::pending_jobs() const {
  absl::MutexLock l(&mu_);
  return jobs_.size();
}
uint64_t Host1xChannel::jobs_done() const {
  absl::MutexLock l(&mu_);
  return jobs_done_;
}
uint64_t Host1xChannel::engine_methods() const {
  absl::MutexLock l(&mu_);
  return engine_methods_;
}
uint64_t Host1xChannel::method_count(Host1xSpace space, uint32_t offset) const {
  absl::MutexLock l(&mu_);
  return done_.Count(space, offset);
}

void Host1xChannel::Run() {
  std::shared_ptr<const Host1xJob> job;
  uint64_t ep;
  {
    absl::MutexLock l(&mu_);
    if (closed_ || failed_ || blocked_ || jobs_.empty()) return;
    job = jobs_.front();
    ep = epoch_;
  }
  if (ep != seen_epoch_) {  // the queue was dropped since the last run: start afresh
    seen_epoch_ = ep;
    started_ = false;
    next_cmdbuf_ = 0;
    cp_.Reset();  // and its tally: the dropped jobs' writes are not reported
  }
  Env env(*this);
  for (int started = 0;;) {
    if (!started_) {
      if (next_cmdbuf_ == job->cmdbufs.size()) {
        FinishFrontJob(ep, *job);
        next_cmdbuf_ = 0;
        runlist_.Schedule(shared_from_this());  // the next job, if any, on a later turn
        return;
      }
      if (started++ == kCmdbufsPerRun) {
        runlist_.Schedule(shared_from_this());
        return;
      }
      std::vector<uint32_t> words;
      std::string why;
      if (!LoadCmdbuf(*job, next_cmdbuf_, &words, &why)) return Fail(why);
      cp_.Start(std::move(words));
      started_ = true;
      ++next_cmdbuf_;
    }
    Host1xRun r = cp_.Run(env, kWordsPerRun);
    switch (r.stop) {
      case Host1xRun::Stop::kDone: started_ = false; continue;
      case Host1xRun::Stop::kYield: runlist_.Schedule(shared_from_this()); return;
      case Host1xRun::Stop::kWait:
        if (BlockOn(ep, r.wait_id, r.wait_thresh)) return;
        continue;
      case Host1xRun::Stop::kError: return Fail(r.error);
    }
  }
}

}  // namespace nvsentry::hostshim::sim
