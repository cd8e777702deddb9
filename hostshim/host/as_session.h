// The guest's as sessions forwarded to the host (docs/host-passthrough.md). On L4T r32.7 opening
// /dev/nvhost-as-gpu makes an address space with the host's default layout (GM20B: 64 KiB big
// pages, L4T-AS-1): the guest's ALLOC_AS(_EX) adopts the session's host open when it asks for that
// layout (its big page size, or its exact VA range). A guest asking another big page size gets the
// host's space the way a host client does, from nvhost-ctrl-gpu's ALLOC_AS (a new fd, L4T-CTRL-11),
// which then replaces the open; where the host cannot hand one out (a FUSE-served fake answers
// ENOTTY) or the layout still differs, NotSupported. It charges the address_spaces budget then.
// Until then every other call answers NotInitialized, as simulated. The address space itself
// (host_address_space.h) outlives the session while a channel bound to it lives.
#pragma once

#include <memory>

#include "absl/synchronization/mutex.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/host_session.h"

namespace nvsentry::hostshim::host {

class AsSession : public HostSession {
 public:
  AsSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd)
      : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostAsGpu, std::move(host_fd)) {}
  Result Ioctl(Call& call) override;

  // The address space, once ALLOC_AS(_EX) made it (null before).
  std::shared_ptr<HostAddressSpace> address_space() const;

 private:
  abi::NvError AllocAs(Call& call, uint32_t big_page_size, uint64_t start, uint64_t split,
                       uint64_t end);
  // Whether the session's host space has the layout asked (NotSupported when not).
  abi::NvError HostSpaceFits(Call& call, uint32_t big_page_size, uint64_t start, uint64_t split,
                             uint64_t end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replaces the session's host space by ctrl-gpu ALLOC_AS's of `big_page_size`; false when the
  // host does not make one.
  bool AllocHostSpace(Call& call, uint32_t big_page_size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  abi::NvError BindChannel(Call& call, HostAddressSpace& space);
  abi::NvError Map(Call& call, HostAddressSpace& space);
  abi::NvError GetVaRegions(Call& call, HostAddressSpace& space);

  mutable absl::Mutex mu_;
  std::shared_ptr<HostAddressSpace> space_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::host
