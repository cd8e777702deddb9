// The L4T ioctl codes `nvsentry fake-l4t DIR -- PROGRAM` traps
// (sentry/fake_l4t/fake_l4t_program.h): those whose answer is a new fd in the caller (L4T-NODE-7)
// and those whose argument names an fd the fake handed out that is not an open of DIR's files
// (L4T-NODE-8), which the FUSE server could not identify. Everything else on DIR's files reaches
// the FUSE server natively.
#pragma once

#include <cstdint>
#include <span>

namespace nvsentry::sentry {

std::span<const uint32_t> FdHandingCodes();

}  // namespace nvsentry::sentry
