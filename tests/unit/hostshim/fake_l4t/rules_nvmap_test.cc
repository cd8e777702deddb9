// The fake Jetson answers as r32.7.4 does: the nvmap rules of docs/host-abi.md, one test per rule
// id. (The fake's handles are ids, not fds: L4T-MAP-1 and -3 are not modelled.)
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvmap.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hm = abi::l4t::nvmap;

class FakeL4tNvmapRules : public FakeL4tRules {
 protected:
  void SetUp() override { nvmap_ = Open(L4tNode::kNvmap); }
  void TearDown() override { fake_.Release(nvmap_); }
  int Free(uint64_t handle) {
    auto r = std::make_shared<Recorded>();
    fake_.Ioctl(nvmap_, L4tRequest{hm::kFree, {}, handle, 0, caller_}, r);
    return r->Err();
  }
  uint64_t nvmap_ = 0;
};

TEST_F(FakeL4tNvmapRules, L4T_MAP_2_CreateSizesAndCreate64) {
  hm::CreateHandle c{};
  c.size = 0;
  EXPECT_EQ(Call(nvmap_, hm::kCreate, &c), EINVAL);
  // The object is whole pages.
  const uint32_t h = NewObject(nvmap_, 100);
  hm::HandleParameters p{};
  p.handle = h;
  ASSERT_EQ(Call(nvmap_, hm::kParameters, &p), 0);
  EXPECT_EQ(p.size, 4096u);
  // CREATE_64: a u64 size in, the handle in the first 4 bytes.
  uint64_t arg = 8192;
  ASSERT_EQ(Call(nvmap_, hm::kCreate64, &arg), 0);
  hm::HandleParameters p64{};
  p64.handle = static_cast<uint32_t>(arg);
  ASSERT_EQ(Call(nvmap_, hm::kParameters, &p64), 0);
  EXPECT_EQ(p64.size, 8192u);
  arg = 0;
  EXPECT_EQ(Call(nvmap_, hm::kCreate64, &arg), EINVAL);
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_4_AllocChecks) {
  const uint32_t h = NewObject(nvmap_, 4096, false);
  hm::AllocHandle a{h, 1u << 30, 1, 3000};  // not a power of two
  EXPECT_EQ(Call(nvmap_, hm::kAlloc, &a), EINVAL);
  a = {h, 0, 1, 4096};  // no heap
  EXPECT_EQ(Call(nvmap_, hm::kAlloc, &a), EINVAL);
  a = {h, (1u << 1) | (1u << 30), 1, 4096};  // IVM is exclusive
  EXPECT_EQ(Call(nvmap_, hm::kAlloc, &a), EINVAL);
  a = {0xFFF0, 1u << 30, 1, 4096};  // no such handle
  EXPECT_EQ(Call(nvmap_, hm::kAlloc, &a), EINVAL);
  a = {h, 1u << 30, 1, 0};
  ASSERT_EQ(Call(nvmap_, hm::kAlloc, &a), 0);
  EXPECT_EQ(Call(nvmap_, hm::kAlloc, &a), EEXIST);  // allocated already
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_5_ReadWriteChecks) {
  const uint32_t unallocated = NewObject(nvmap_, 4096, false);
  uint8_t buf[64] = {};
  const uint64_t addr = reinterpret_cast<uint64_t>(buf);
  hm::RwHandle rw{addr, unallocated, 0, 4, 4, 4, 1};
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), EPERM);  // no heap yet
  const uint32_t h = NewObject(nvmap_, 4096);
  rw = {0, h, 0, 4, 4, 4, 1};  // no address
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), EINVAL);
  rw = {addr, h, 0, 8, 4, 8, 2};  // object stride below the element
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), EINVAL);
  rw = {addr, h, 0, 8, 8, 4, 2};  // caller stride below the element
  EXPECT_EQ(Call(nvmap_, hm::kWrite, &rw), EINVAL);
  rw = {addr, h, 0, 4, 8, 4096, 2};  // caller stride times count past the object
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), EINVAL);
  rw = {addr, h, 4096, 4, 4, 4, 1};  // offset at the end
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), EINVAL);
  rw = {addr, h, 4, 8, 16, 16, 4};  // strided, inside
  EXPECT_EQ(Call(nvmap_, hm::kRead, &rw), 0);
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_6_ReadWriteWriteTheBytesCopiedIntoCount) {
  const uint32_t h = NewObject(nvmap_, 4096);
  uint8_t buf[64] = {};
  hm::RwHandle rw{reinterpret_cast<uint64_t>(buf), h, 0, 4, 16, 8, 3};
  ASSERT_EQ(Call(nvmap_, hm::kWrite, &rw), 0);  // _IOW: nothing copied back by the kernel...
  EXPECT_EQ(rw.count, 12u);                     // ...yet count holds the bytes copied
  rw = {reinterpret_cast<uint64_t>(buf), h, 8, 16, 16, 16, 4};  // one atom of 64
  ASSERT_EQ(Call(nvmap_, hm::kRead, &rw), 0);
  EXPECT_EQ(rw.count, 64u);
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_7_FreeOfZeroIsNothingAndOfNoHandleEbadf) {
  EXPECT_EQ(Free(0), 0);
  EXPECT_EQ(Free(0xFFF0), EBADF);
  const uint32_t h = NewObject(nvmap_, 4096);
  EXPECT_EQ(Free(h), 0);
  EXPECT_EQ(Free(h), EBADF);  // closed already
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_8_ParametersOfNoHandleEnodevAndPassedFields) {
  hm::HandleParameters p{};
  p.handle = 0xFFF0;
  EXPECT_EQ(Call(nvmap_, hm::kParameters, &p), ENODEV);
  const uint32_t h = NewObject(nvmap_, 4096, false);
  p = {};
  p.handle = h;
  p.import_id = 0xABCD;
  p.access_flags = 0x77;
  ASSERT_EQ(Call(nvmap_, hm::kParameters, &p), 0);
  EXPECT_EQ(p.heap, 0u);  // not allocated
  EXPECT_EQ(p.import_id, 0xABCDu);
  EXPECT_EQ(p.access_flags, 0x77u);
  hm::AllocHandle a{h, 1u << 30, 1, 0};
  ASSERT_EQ(Call(nvmap_, hm::kAlloc, &a), 0);
  ASSERT_EQ(Call(nvmap_, hm::kParameters, &p), 0);
  EXPECT_EQ(p.heap, 1u << 30);
  EXPECT_EQ(p.align, 4096u);  // raised to a page
  EXPECT_EQ(p.coherency, 1u);
}

TEST_F(FakeL4tNvmapRules, L4T_MAP_9_FromIdAndGetIdAreEnotty) {
  const uint32_t h = NewObject(nvmap_, 4096);
  hm::CreateHandle id{};
  id.handle = h;
  EXPECT_EQ(Call(nvmap_, hm::kGetId, &id), ENOTTY);
  hm::CreateHandle from{};
  from.id = h;
  EXPECT_EQ(Call(nvmap_, hm::kFromId, &from), ENOTTY);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
