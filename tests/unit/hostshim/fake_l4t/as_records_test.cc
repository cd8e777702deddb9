// The fake's per-address-space bookkeeping (hostshim/fake_l4t/as_records.h).
#include "hostshim/fake_l4t/as_records.h"

#include <gtest/gtest.h>

namespace nvsentry::hostshim::fake_l4t {
namespace {

TEST(FakeL4tAsRecords, ReferencesAndTheLastDrop) {
  AsRecords r;
  const MapKey k{8, 0, 0x100, 0};
  EXPECT_FALSE(r.Reuse(k));
  r.AddMapping(k, 0x1000);
  EXPECT_EQ(r.Reuse(k), 0x1000u);
  EXPECT_FALSE(r.Reuse(MapKey{8, 0xFE, 0x100, 0}));  // another kind
  EXPECT_EQ(r.DropMapping(0x1000), AsRecords::Drop::kReferenced);
  EXPECT_EQ(r.DropMapping(0x1000), AsRecords::Drop::kLast);
  EXPECT_EQ(r.DropMapping(0x1000), AsRecords::Drop::kNone);
}

TEST(FakeL4tAsRecords, AGoneObjectsMappingsAreForgotten) {
  AsRecords r;
  r.AddMapping({8, 0, 0x100, 0}, 0x1000);
  r.AddMapping({12, 0, 0x100, 0}, 0x2000);
  r.ForgetHandle(8);
  EXPECT_EQ(r.mapping_count(), 1u);
  EXPECT_FALSE(r.Reuse({8, 0, 0x100, 0}));  // a new object under the same id maps anew
  EXPECT_EQ(r.DropMapping(0x2000), AsRecords::Drop::kLast);
}

TEST(FakeL4tAsRecords, AReservationGoesByAnyOffsetInsideWithItsMappings) {
  AsRecords r;
  r.AddReservation({0x10000, 4, 0x1000});
  r.AddMapping({8, 0, 0x101, 0x11000}, 0x11000);
  r.AddMapping({12, 0, 0x100, 0}, 0x20000);  // outside
  EXPECT_FALSE(r.TakeReservation(0x14000));  // just past its end
  auto taken = r.TakeReservation(0x13FFF);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->offset, 0x10000u);
  EXPECT_EQ(r.mapping_count(), 1u);
  EXPECT_FALSE(r.TakeReservation(0x10000));
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
