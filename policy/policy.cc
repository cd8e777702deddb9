#include "policy/policy.h"

#include <algorithm>

#include "abi/gpu_classes.h"
#include "abi/services.h"

namespace nvsentry::policy {

bool HostCapable(abi::DeviceId id) {
  using abi::DeviceId;
  return id == DeviceId::kNvhostCtrl || id == DeviceId::kNvmap || id == DeviceId::kNvhostAsGpu ||
         id == DeviceId::kNvhostCtrlGpu || id == DeviceId::kNvhostGpu;
}

bool UsesGpuObjects(abi::DeviceId id) {
  using abi::DeviceId;
  switch (id) {
    case DeviceId::kNvdispCtrl:
    case DeviceId::kNvdispDisp0:
    case DeviceId::kNvdispDisp1:
    case DeviceId::kNvhostDbgGpu:
    case DeviceId::kNvhostProfGpu:
    case DeviceId::kNvhostMsenc:
    case DeviceId::kNvhostNvdec:
    case DeviceId::kNvhostNvjpg:
    case DeviceId::kNvhostVic:
    case DeviceId::kNvhostDisplay:
    case DeviceId::kNvhostTsec: return true;
    default: return false;
  }
}

bool Policy::GpuOnHost() const {
  auto it = devices.find(abi::DeviceId::kNvhostGpu);
  return it != devices.end() && it->second.backend == Backend::kHost;
}

const DeviceRule& Policy::Device(abi::DeviceId id) const {
  static const DeviceRule kDefault;
  static const DeviceRule kDenied{Backend::kDeny, Verdict::kAllow};
  auto it = devices.find(id);
  if (UsesGpuObjects(id) && GpuOnHost()) return kDenied;
  return it == devices.end() ? kDefault : it->second;
}

IoctlRule Policy::Ioctl(const abi::DeviceDesc& dev, const abi::IoctlDesc& desc) const {
  if (auto it = ioctls.find(&desc); it != ioctls.end()) return it->second;
  const Verdict device = Device(dev.id).ioctls;
  if (const IoctlRule* f = Followed(desc)) {
    IoctlRule r = *f;
    if (device == Verdict::kDeny) r = IoctlRule{Verdict::kDeny, {}, {}};
    return r;
  }
  IoctlRule r;
  r.verdict = device;
  return r;
}

void ResolveFollowers(Policy& p) {
  p.followed.clear();
  for (const abi::NamedIoctl& n : abi::AllIoctls()) {
    const abi::IoctlDesc& f = *n.ioctl;
    if (f.follows.empty() || p.ioctls.contains(&f) || p.followed.contains(&f)) continue;
    // The nearest ioctl up its chain (MAP_BUFFER_EX2 follows MAP_BUFFER_EX, which follows
    // MAP_BUFFER) that a rule names: on the same device, the entry of the policy's firmware.
    const IoctlRule* base = nullptr;
    const abi::IoctlDesc* base_desc = nullptr;
    const abi::IoctlDesc* at = &f;
    for (int hops = 0; hops < 8 && base == nullptr && !at->follows.empty(); ++hops) {
      const abi::IoctlDesc* next = nullptr;
      for (const abi::IoctlDesc& b : n.device->ioctls)
        if (b.name == at->follows && (next == nullptr || b.fw.Contains(p.firmware))) next = &b;
      if (next == nullptr) break;
      if (auto it = p.ioctls.find(next); it != p.ioctls.end()) {
        base = &it->second;
        base_desc = next;
      }
      at = next;
    }
    if (base == nullptr) continue;
    IoctlRule r;
    r.verdict = base->verdict;
    if (!base->array_limits.empty()) {
      for (const abi::ArrayDesc& a : f.arrays) {
        uint32_t limit = a.max_count;
        for (size_t i = 0; i < base_desc->arrays.size() && i < base->array_limits.size(); ++i)
          if (base_desc->arrays[i].name == a.name) limit = std::min(limit, base->array_limits[i]);
        r.array_limits.push_back(limit);
      }
    }
    for (const FieldRule& fr : base->fields)
      for (const abi::Field& x : f.fields)
        if (x.name == fr.field->name && x.dir == fr.field->dir && x.type == fr.field->type &&
            x.count == fr.field->count) {
          FieldRule mine = fr;
          mine.field = &x;
          r.fields.push_back(mine);
          break;
        }
    p.followed[&f] = std::move(r);
  }
}

namespace {

const abi::IoctlDesc* AllocObjCtx(const abi::DeviceDesc& gpu, abi::Firmware fw) {
  for (const abi::IoctlDesc& d : gpu.ioctls)
    if (d.name == "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX" && d.fw.Contains(fw)) return &d;
  return nullptr;
}

}  // namespace

bool AllowsObjectContext(const Policy& p, uint32_t cls) {
  const abi::DeviceDesc& gpu = abi::Device(abi::DeviceId::kNvhostGpu);
  const abi::IoctlDesc* desc = AllocObjCtx(gpu, p.firmware);
  if (desc == nullptr) return false;
  const IoctlRule rule = p.Ioctl(gpu, *desc);
  if (rule.verdict != Verdict::kAllow) return false;
  for (const FieldRule& f : rule.fields) {
    if (f.field == nullptr || f.field->name != "class_num") continue;
    if (f.max && cls > *f.max) return false;
    if (f.bits && (cls & ~*f.bits) != 0) return false;
    if (!f.one_of.empty() && std::find(f.one_of.begin(), f.one_of.end(), cls) == f.one_of.end())
      return false;
  }
  return true;
}

bool AllowsGraphicsContext(const Policy& p) {
  for (const abi::GpuClass& c : abi::kGpuClasses)
    if (c.engine == abi::GpuEngine::kGraphics && AllowsObjectContext(p, c.number)) return true;
  return false;
}

std::vector<uint32_t> BindableClasses(const Policy& p) {
  if (p.channel_classes) return *p.channel_classes;
  const bool graphics = AllowsGraphicsContext(p);
  std::vector<uint32_t> out;
  for (const abi::GpuClass& c : abi::kGpuClasses) {
    const bool engine_allowed =
        c.engine == abi::GpuEngine::kGraphics ? graphics : AllowsObjectContext(p, c.number);
    if (engine_allowed) out.push_back(c.number);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Policy DefaultPolicy() {
  Policy p;
  p.source = "(default)";
  p.permission_mask = *abi::ServiceMask(p.service, p.firmware);
  return p;
}

}  // namespace nvsentry::policy
