// NvError -> errno: the guest contract's table (design.md), checked row by row.
#include "abi/nverror.h"

#include <cerrno>
#include <set>

#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

TEST(NvError, ContractRows) {
  EXPECT_EQ(NvErrorToErrno(NvError::kSuccess), 0);
  for (NvError e : {NvError::kBadParameter, NvError::kBadValue, NvError::kInvalidSize,
                    NvError::kCountMismatch, NvError::kOverFlow})
    EXPECT_EQ(NvErrorToErrno(e), EINVAL) << NvErrorName(e);
  EXPECT_EQ(NvErrorToErrno(NvError::kNotSupported), EOPNOTSUPP);
  EXPECT_EQ(NvErrorToErrno(NvError::kAccessDenied), EACCES);
  EXPECT_EQ(NvErrorToErrno(NvError::kTimeout), ETIMEDOUT);
  for (NvError e : {NvError::kInsufficientMemory, NvError::kInsufficientTransferMemory,
                    NvError::kInsufficientVideoMemory})
    EXPECT_EQ(NvErrorToErrno(e), ENOMEM) << NvErrorName(e);
  EXPECT_EQ(NvErrorToErrno(NvError::kBusy), EBUSY);
  EXPECT_EQ(NvErrorToErrno(NvError::kAlreadyAllocated), EEXIST);
}

TEST(NvError, EverySeedCodeIsListedOnceWithAnErrno) {
  size_t n = 0;
  const NvErrorInfo* all = AllNvErrors(&n);
  EXPECT_EQ(n, 54u) << "Switchbrew lists 54 NvError codes";
  std::set<uint32_t> codes;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(codes.insert(static_cast<uint32_t>(all[i].code)).second) << all[i].name;
    if (all[i].code != NvError::kSuccess) {
      EXPECT_GT(all[i].err, 0) << all[i].name;
    }
    EXPECT_EQ(NvErrorName(all[i].code), all[i].name);
  }
  EXPECT_EQ(NvErrorName(static_cast<NvError>(0xC)), "Unknown");
  EXPECT_EQ(NvErrorToErrno(static_cast<NvError>(0xC)), EIO);
}

}  // namespace
}  // namespace nvsentry::abi
