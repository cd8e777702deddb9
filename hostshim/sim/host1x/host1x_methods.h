// The names of what a host1x command stream writes, for the trace: the host1x class's methods,
// the registers of an engine's host interface (THI), and the engine classes' own methods (VIC,
// NVDEC, NVJPG, MSENC, TSEC), which a stream reaches through two THI registers: METHOD0 takes the
// method's word offset, METHOD1 its data. One table per class; docs/simulated-gpu.md names the
// sources. Also the tally of one job's writes and the summary line the trace shows for it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace nvsentry::hostshim::sim {

// THI registers (word offsets) every host1x engine class has.
inline constexpr uint32_t kThiIncrSyncpt = 0x00;
inline constexpr uint32_t kThiMethod0 = 0x10;
inline constexpr uint32_t kThiMethod1 = 0x11;
// Engine methods are counted by byte offset (as the class headers give them) below this; the
// rest together (no class defines one there).
inline constexpr uint32_t kMaxNamedEngineMethod = 0x4000;

// Where a write landed.
enum class Host1xSpace : uint8_t { kEngine, kThi, kHost };  // the order summaries list them in

// "" when the table has no name for it. `method` is a word offset for kHost and kThi, a byte
// offset for kEngine; an indexed engine method is named with its index,
// "SET_PICTURE_LUMA_OFFSET(3)", or "SET_IN_REF_PIC3_LUMA" where the class header numbers the
// name itself.
std::string_view Host1xHostMethodName(uint32_t method);
std::string_view Host1xThiName(uint32_t method);
std::string Host1xEngineMethodName(uint32_t engine_class, uint32_t byte_offset);
// "VIC", "NVDEC", ...; "class 0x.." for a class without a table.
std::string Host1xClassName(uint32_t engine_class);

// The writes of one job, by space and offset (engine methods at or over kMaxNamedEngineMethod
// count under kMaxNamedEngineMethod). Bounded: at most 3 x 0x1000 keys.
class Host1xTally {
 public:
  void Add(Host1xSpace space, uint32_t offset);
  uint64_t Count(Host1xSpace space, uint32_t offset) const;
  uint64_t total() const { return total_; }
  bool empty() const { return total_ == 0; }
  void Clear();
  void Merge(const Host1xTally& other);
  // "VIC: SET_APPLICATION_ID x1, EXECUTE x1; THI: INCR_SYNCPT x1; host1x: WAIT_SYNCPT_32 x1":
  // each space in that order, offsets ascending, unnamed ones as their hex offset. METHOD0 and
  // METHOD1 are left out: the engine methods they carry are listed instead.
  std::string Summary(uint32_t engine_class) const;

 private:
  static uint32_t Key(Host1xSpace space, uint32_t offset);
  absl::flat_hash_map<uint32_t, uint64_t> counts_;
  uint64_t total_ = 0;
};

}  // namespace nvsentry::hostshim::sim
