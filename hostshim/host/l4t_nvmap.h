// The host's /dev/nvmap spoken in the L4T ABI (abi/l4t/nvmap.h), for the twins: CREATE and ALLOC
// make an object, READ and WRITE move its contents through sentry buffers, FREE lets it go. The
// handle is whatever CREATE answered: a dma-buf fd of the sentry's on r32.7 kernels (FREE closes
// it), an id on kernels with ids; the backend treats it as opaque either way.
#pragma once

#include "hostshim/host/host_call.h"
#include "hostshim/host/twins.h"

namespace nvsentry::hostshim::host {

// The L4T heap and cache attributes every twin gets: IOVMM (memory the GPU reaches through its
// SMMU, NVMAP_HEAP_IOVMM) and write-combined (NVMAP_HANDLE_WRITE_COMBINE), the combination L4T's
// own GPU clients ask for. The guest's heap mask names Switch heaps, which mean nothing to L4T.
inline constexpr uint32_t kL4tHeapIovmm = 1u << 30;
inline constexpr uint32_t kL4tWriteCombine = 1;

class L4tNvmap : public HostNvmap {
 public:
  // `fd` is the sentry's open of the host's nvmap and outlives this.
  explicit L4tNvmap(int fd) : fd_(fd) {}
  absl::StatusOr<uint32_t> Make(uint64_t size, const sim::NvmapObject::Attributes& attr) override;
  absl::Status Read(uint32_t handle, uint64_t offset, std::span<uint8_t> out) override;
  absl::Status Write(uint32_t handle, uint64_t offset, std::span<const uint8_t> data) override;
  void Free(uint32_t handle) override;

 private:
  absl::Status Move(uint32_t code, uint32_t handle, uint64_t offset, uint8_t* buf, size_t len);
  int fd_;
};

}  // namespace nvsentry::hostshim::host
