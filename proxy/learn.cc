#include "proxy/learn.h"

#include <algorithm>
#include <optional>

#include "proxy/enforce.h"

namespace nvsentry::proxy {

constexpr uint64_t kLearnedParkedWaitsFloor = 8;
constexpr uint64_t kLearnedQueuedBytesFloor = 1ull << 20;

uint64_t WithHeadroom(uint64_t seen, uint64_t floor, uint64_t cap) {
  uint64_t v = seen > UINT64_MAX / 2 ? UINT64_MAX : seen * 2;
  return std::min(std::max(v, floor), cap);
}

void Learner::Opened(const abi::DeviceDesc& dev) {
  absl::MutexLock l(&mu_);
  opened_.insert(dev.id);
}

void Learner::Called(const abi::IoctlDesc& desc) {
  absl::MutexLock l(&mu_);
  auto& counts = called_[&desc];
  counts.resize(desc.arrays.size(), 0);
}

void Learner::Arrays(const abi::IoctlDesc& desc, std::span<const abi::ArraySlice> slices) {
  absl::MutexLock l(&mu_);
  auto& counts = called_[&desc];
  counts.resize(desc.arrays.size(), 0);
  for (size_t i = 0; i < slices.size() && i < counts.size(); ++i)
    counts[i] = std::max(counts[i], slices[i].count);
}

namespace {

constexpr size_t kMaxOneOf = 16;

constexpr LearnableField kLearnable[] = {
    {"NVMAP_IOC_CREATE", "size", LearnAs::kMax},
    {"NVMAP_IOC_ALLOC", "heapmask", LearnAs::kBits},
    {"NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", "class_num", LearnAs::kOneOf},
    {"NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO", "num_entries", LearnAs::kMax},
    {"NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX", "num_entries", LearnAs::kMax},
    {"NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX2", "num_entries", LearnAs::kMax},
    {"NVGPU_AS_IOCTL_ALLOC_SPACE", "pages", LearnAs::kMax},
};

// The learnable fields of `desc` with how each is learned.
std::vector<std::pair<const abi::Field*, LearnAs>> LearnableOf(const abi::IoctlDesc& desc) {
  std::vector<std::pair<const abi::Field*, LearnAs>> out;
  for (const LearnableField& lf : kLearnable) {
    if (lf.ioctl != desc.name) continue;
    for (const abi::Field& f : desc.fields)
      if (f.name == lf.field) out.emplace_back(&f, lf.how);
  }
  return out;
}

// The largest value a field of this type holds.
uint64_t FieldTypeMax(const abi::Field& f) {
  const uint32_t bytes = abi::FieldTypeSize(f.type);
  return bytes >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * bytes)) - 1;
}

}  // namespace

std::span<const LearnableField> LearnableFields() { return kLearnable; }

void Learner::Fields(const abi::IoctlDesc& desc, std::span<const uint8_t> fixed) {
  // Most ioctls have none; the name comparison is cheaper than a lock.
  std::vector<std::pair<const abi::Field*, LearnAs>> fields = LearnableOf(desc);
  if (fields.empty()) return;
  absl::MutexLock l(&mu_);
  for (const auto& [f, how] : fields) {
    std::optional<uint64_t> v = FieldValue(*f, fixed);
    if (!v) continue;
    Seen& s = fields_[f];
    s.max = std::max(s.max, *v);
    s.bits |= *v;
    if (!s.too_many && std::find(s.values.begin(), s.values.end(), *v) == s.values.end()) {
      if (s.values.size() == kMaxOneOf)
        s.too_many = true;
      else
        s.values.push_back(*v);
    }
  }
}

void Learner::Initialized(uint64_t size) {
  absl::MutexLock l(&mu_);
  max_initialize_ = std::max(max_initialize_, size);
}

void Learner::Bound(uint32_t cls) {
  absl::MutexLock l(&mu_);
  bound_.insert(cls);
}

namespace {

// Twice the budget peaks `used` saw (at most what `ran` allowed).
policy::Budgets LearnedBudgets(const policy::Budgets& ran, const BudgetAccount& used,
                               uint64_t max_initialize) {
  policy::Budgets b = ran;
  // Page-granular, like the Initialize sizes themselves; it also covers the sentry memory behind
  // nvmap objects allocated without a guest address.
  const uint64_t tm = WithHeadroom(std::max(max_initialize, used.peak(BudgetKind::kTransferMemory)),
                                   0, ran.transfer_memory);
  b.transfer_memory = std::min<uint64_t>((tm + 0xFFF) & ~uint64_t{0xFFF}, ran.transfer_memory);
  b.open_fds =
      static_cast<uint32_t>(WithHeadroom(used.peak(BudgetKind::kOpenFds), 1, ran.open_fds));
  b.nvmap_objects = static_cast<uint32_t>(
      WithHeadroom(used.peak(BudgetKind::kNvmapObjects), 0, ran.nvmap_objects));
  b.channels =
      static_cast<uint32_t>(WithHeadroom(used.peak(BudgetKind::kChannels), 0, ran.channels));
  b.address_spaces = static_cast<uint32_t>(
      WithHeadroom(used.peak(BudgetKind::kAddressSpaces), 0, ran.address_spaces));
  b.pinned_bytes = WithHeadroom(used.peak(BudgetKind::kPinnedBytes), 0, ran.pinned_bytes);
  b.mappings =
      static_cast<uint32_t>(WithHeadroom(used.peak(BudgetKind::kMappings), 0, ran.mappings));
  // Whether a wait parks at all depends on timing (a fence may be reached before the wait is
  // served), so a run that parked few leaves room for a few more.
  b.parked_waits = static_cast<uint32_t>(WithHeadroom(used.peak(BudgetKind::kParkedWaits),
                                                      kLearnedParkedWaitsFloor, ran.parked_waits));
  // How much work is queued at once depends on how fast the engines ran, as parked waits do.
  b.queued_bytes =
      WithHeadroom(used.peak(BudgetKind::kQueuedBytes), kLearnedQueuedBytesFloor, ran.queued_bytes);
  // Twins exist over the host backend only: a run that made none says nothing about them.
  b.twin_bytes = used.peak(BudgetKind::kTwinBytes) == 0
                     ? ran.twin_bytes
                     : WithHeadroom(used.peak(BudgetKind::kTwinBytes), 0, ran.twin_bytes);
  return b;
}

}  // namespace

policy::IoctlRule Learner::LearnedIoctl(const abi::IoctlDesc& desc,
                                        const std::vector<uint64_t>& counts) const {
  policy::IoctlRule r;
  r.verdict = policy::Verdict::kAllow;
  for (size_t i = 0; i < desc.arrays.size(); ++i) {
    const uint64_t seen = i < counts.size() ? counts[i] : 0;
    r.array_limits.push_back(
        static_cast<uint32_t>(WithHeadroom(seen, 1, desc.arrays[i].max_count)));
  }
  for (const auto& [f, how] : LearnableOf(desc)) {
    auto seen = fields_.find(f);
    if (seen == fields_.end()) continue;
    const Seen& s = seen->second;
    policy::FieldRule fr{f, std::nullopt, std::nullopt, {}};
    switch (how) {
      case LearnAs::kMax: fr.max = WithHeadroom(s.max, 1, FieldTypeMax(*f)); break;
      case LearnAs::kBits: fr.bits = s.bits; break;
      case LearnAs::kOneOf:
        if (s.too_many) continue;
        fr.one_of = s.values;
        std::sort(fr.one_of.begin(), fr.one_of.end());
        break;
    }
    r.fields.push_back(std::move(fr));
  }
  return r;
}

void Learner::LearnDevices(const policy::Policy& ran, policy::Policy& p) const {
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    if (!dev.fw.Contains(ran.firmware)) continue;
    policy::DeviceRule rule;
    if (!opened_.contains(dev.id)) {
      rule.backend = policy::Backend::kDeny;
      p.devices[dev.id] = rule;
      continue;
    }
    rule.backend = ran.Device(dev.id).backend;
    rule.ioctls = policy::Verdict::kDeny;
    p.devices[dev.id] = rule;
    for (const abi::IoctlDesc& desc : dev.ioctls) {
      auto it = called_.find(&desc);
      if (it == called_.end()) continue;
      p.ioctls[&desc] = LearnedIoctl(desc, it->second);
    }
  }
}

policy::Policy Learner::Learned(const policy::Policy& ran, const BudgetAccount& used) const {
  absl::MutexLock l(&mu_);
  policy::Policy p;
  p.source = "(learned)";
  p.service = ran.service;
  p.firmware = ran.firmware;
  p.permission_mask = ran.permission_mask;
  p.mask_explicit = ran.mask_explicit;
  p.aruid = ran.aruid;
  p.debug_mode = ran.debug_mode;
  p.production_mode = ran.production_mode;
  p.action = policy::Action::kErrno;
  p.budgets = LearnedBudgets(ran.budgets, used, max_initialize_);
  // What the channels' command streams bound, said explicitly: the ALLOC_OBJ_CTX rule alone would
  // not let a pushbuffer bind the classes real clients bind without a context of their own.
  if (opened_.contains(abi::DeviceId::kNvhostGpu)) {
    std::vector<uint32_t> classes(bound_.begin(), bound_.end());
    std::sort(classes.begin(), classes.end());
    p.channel_classes = std::move(classes);
  }
  LearnDevices(ran, p);
  policy::ResolveFollowers(p);
  return p;
}

}  // namespace nvsentry::proxy
