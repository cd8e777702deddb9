#include "hostshim/unimplemented.h"

#include "spdlog/spdlog.h"

namespace nvsentry::hostshim {

Result Unimplemented(const abi::IoctlDesc& desc) {
  spdlog::warn("{} (0x{:08X}) is not implemented yet: answering NotSupported", desc.name,
               desc.code);
  return Result::Done(abi::NvError::kNotSupported);
}

}  // namespace nvsentry::hostshim
