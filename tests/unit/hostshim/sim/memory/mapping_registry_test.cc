// The records of the GPU mappings that pin one nvmap object
// (hostshim/sim/memory/mapping_registry.h): multiplicity, removal by record and by owner, and
// logarithmic cost counted in comparisons.
#include "hostshim/sim/memory/mapping_registry.h"

#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {
namespace {

class Owner : public MappingOwner {
 public:
  void ForceUnmap(uint64_t) override {}
};

TEST(MappingRegistry, RecordsWithMultiplicityAndOwners) {
  auto a = std::make_shared<Owner>(), b = std::make_shared<Owner>();
  MappingRegistry r;
  r.Add(a, a.get(), 0x1000);
  r.Add(a, a.get(), 0x1000);  // a probe of a VA the owner holds (AddressSpace::ForceUnmap)
  r.Add(a, a.get(), 0x2000);
  r.Add(b, b.get(), 0x1000);
  EXPECT_EQ(r.size(), 4u);
  r.Remove(a.get(), 0x1000);
  EXPECT_EQ(r.size(), 3u) << "one record of the two";
  r.Remove(a.get(), 0x3000);
  r.Remove(reinterpret_cast<const MappingOwner*>(0x10), 0x1000);
  EXPECT_EQ(r.size(), 3u) << "unknown records are ignored";
  std::vector<std::pair<const MappingOwner*, uint64_t>> seen;
  r.ForEach([&](const std::weak_ptr<MappingOwner>& o, uint64_t va) {
    seen.emplace_back(o.lock().get(), va);
  });
  EXPECT_EQ(seen.size(), 3u);
  r.RemoveOwner(a.get());
  EXPECT_EQ(r.size(), 1u);
  r.Remove(b.get(), 0x1000);
  EXPECT_TRUE(r.empty());
}

// Adding and removing n records of one owner costs O(log n) comparisons each: at 16 times the
// records, well under twice the comparisons per operation (a list would make 16 times as many).
double ComparisonsPerOp(uint64_t n) {
  auto a = std::make_shared<Owner>();
  MappingRegistry r;
  const uint64_t before = tls_counted_comparisons;
  for (uint64_t i = 0; i < n; i++) r.Add(a, a.get(), ((i * 7919) % n) << 12);
  for (uint64_t i = 0; i < n; i++) r.Remove(a.get(), ((i * 104729) % n) << 12);
  EXPECT_TRUE(r.empty());
  return double(tls_counted_comparisons - before) / (2 * n);
}

TEST(MappingRegistry, AddAndRemoveAreLogarithmic) {
  const double small = ComparisonsPerOp(1u << 10), big = ComparisonsPerOp(1u << 14);
  EXPECT_GT(small, 0);
  EXPECT_LT(big, 2.0 * small) << small << " -> " << big;
  // Dropping an owner searches nothing.
  auto a = std::make_shared<Owner>();
  MappingRegistry r;
  for (uint64_t i = 0; i < 1000; i++) r.Add(a, a.get(), i << 12);
  const uint64_t before = tls_counted_comparisons;
  r.RemoveOwner(a.get());
  EXPECT_EQ(tls_counted_comparisons, before);
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
