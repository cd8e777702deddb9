// The channel table and /dev/nvmap against Switchbrew: codes, sizes and layouts typed in here from
// Switchbrew's tables, and the variable-length ioctls' arithmetic on real catalogue entries.
#include <cstring>
#include <string_view>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

struct WikiRow {
  uint32_t code;  // with 0 in the size bits for Switchbrew's "0xC0??...." rows
  uint32_t size;  // 0 for variable
  const char* name;
};

constexpr WikiRow kSwitchbrewChannel[] = {
    {0xC0000001, 0, "NVHOST_IOCTL_CHANNEL_SUBMIT"},
    {0xC0080002, 8, "NVHOST_IOCTL_CHANNEL_GET_SYNCPOINT"},
    {0xC0080003, 8, "NVHOST_IOCTL_CHANNEL_GET_WAITBASE"},
    {0xC0080004, 8, "NVHOST_IOCTL_CHANNEL_GET_MODMUTEX"},
    {0x40040007, 4, "NVHOST_IOCTL_CHANNEL_SET_SUBMIT_TIMEOUT"},
    {0x40080008, 8, "NVHOST_IOCTL_CHANNEL_SET_CLK_RATE"},
    {0xC0000009, 0, "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER"},
    {0xC000000A, 0, "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER"},
    {0x00000013, 0, "NVHOST_IOCTL_CHANNEL_SET_TIMEOUT_EX"},
    {0xC0080023, 8, "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE"},
    {0xC0000024, 0, "NVHOST_IOCTL_CHANNEL_SUBMIT_EX"},
    {0xC0000025, 0, "NVHOST_IOCTL_CHANNEL_MAP_CMD_BUFFER_EX"},
    {0xC0000026, 0, "NVHOST_IOCTL_CHANNEL_UNMAP_CMD_BUFFER_EX"},
    {0x40044801, 4, "NVGPU_IOCTL_CHANNEL_SET_NVMAP_FD"},
    {0x40044803, 4, "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT"},
    {0x40084805, 8, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO"},
    {0x40184806, 24, "NVGPU_IOCTL_CHANNEL_WAIT"},
    {0xC0044807, 4, "NVGPU_IOCTL_CHANNEL_CYCLE_STATS"},
    {0xC0004808, 0, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO"},
    {0xC0104809, 16, "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX"},
    {0x4008480A, 8, "NVHOST_IOCTL_CHANNEL_FREE_OBJ_CTX"},
    {0xC010480B, 16, "NVGPU_IOCTL_CHANNEL_ZCULL_BIND"},
    {0xC018480C, 24, "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER"},
    {0x4004480D, 4, "NVGPU_IOCTL_CHANNEL_SET_PRIORITY"},
    {0x0000480E, 0, "NVGPU_IOCTL_CHANNEL_ENABLE"},
    {0x0000480F, 0, "NVGPU_IOCTL_CHANNEL_DISABLE"},
    {0x00004810, 0, "NVGPU_IOCTL_CHANNEL_PREEMPT"},
    {0x00004811, 0, "NVGPU_IOCTL_CHANNEL_FORCE_RESET"},
    {0x40084812, 8, "NVGPU_IOCTL_CHANNEL_EVENT_ID_CONTROL"},
    {0xC0104813, 16, "NVGPU_IOCTL_CHANNEL_CYCLE_STATS_SNAPSHOT"},
    {0x80804816, 128, "NVGPU_IOCTL_CHANNEL_GET_ERROR_INFO"},
    {0xC0104817, 16, "NVGPU_IOCTL_CHANNEL_GET_ERROR_NOTIFICATION"},
    {0x40204818, 32, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX"},
    {0xC0004819, 0, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_RETRY"},
    {0xC020481A, 32, "NVGPU_IOCTL_CHANNEL_ALLOC_GPFIFO_EX2"},
    {0xC018481B, 24, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO2"},
    {0xC018481C, 24, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO2_RETRY"},
    {0xC004481D, 4, "NVGPU_IOCTL_CHANNEL_SET_TIMESLICE"},
    {0x40084714, 8, "NVGPU_IOCTL_CHANNEL_SET_USER_DATA"},
    {0x80084715, 8, "NVGPU_IOCTL_CHANNEL_GET_USER_DATA"},
};

constexpr DeviceId kChannels[] = {
    DeviceId::kNvhostGpu, DeviceId::kNvhostMsenc,   DeviceId::kNvhostNvdec, DeviceId::kNvhostNvjpg,
    DeviceId::kNvhostVic, DeviceId::kNvhostDisplay, DeviceId::kNvhostTsec};

uint32_t WithSize(uint32_t code, uint32_t size) { return code | (size << 16); }

const IoctlDesc& Channel(uint32_t code, Firmware fw = kLatestFirmware) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvhostGpu), code, fw);
  if (d == nullptr) ADD_FAILURE() << std::hex << "no channel ioctl 0x" << code;
  static const IoctlDesc kNone{};
  return d != nullptr ? *d : kNone;
}

const Field* FieldNamed(std::span<const Field> fields, std::string_view name) {
  for (const Field& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(CatalogueChannel, EveryChannelDeviceHasTheSeedsTable) {
  for (DeviceId id : kChannels) {
    const DeviceDesc& dev = Device(id);
    // GET_CLK_RATE has two numbers (before and from 7.0.1): one row of Switchbrew, two entries.
    EXPECT_EQ(dev.ioctls.size(), std::size(kSwitchbrewChannel) + 1) << dev.path;
    for (const WikiRow& row : kSwitchbrewChannel) {
      uint32_t code = row.size == 0 && (row.code >> 30) != 0 ? WithSize(row.code, 0x40) : row.code;
      const IoctlDesc* d = FindIoctl(dev, code);
      ASSERT_NE(d, nullptr) << dev.path << " " << row.name;
      EXPECT_EQ(d->name, row.name);
      if (!d->variable()) EXPECT_EQ(d->size(), row.size) << row.name;
    }
  }
}

TEST(CatalogueChannel, VariableCodesAcceptAnySize) {
  for (uint32_t base : {0xC0000001u, 0xC0000009u, 0xC000000Au, 0xC0000024u, 0xC0000025u,
                        0xC0000026u, 0xC0004808u, 0xC0004819u}) {
    const IoctlDesc& d = Channel(WithSize(base, 0x18));
    EXPECT_TRUE(d.variable()) << d.name;
    EXPECT_EQ(&Channel(WithSize(base, 0x3FFF)), &d);
    EXPECT_EQ(&Channel(base), &d);
  }
  // SUBMIT_GPFIFO2 is fixed: its entries travel in Ioctl2's second buffer.
  const IoctlDesc& g2 = Channel(0xC018481B);
  EXPECT_FALSE(g2.variable());
  EXPECT_EQ(FindIoctl(Device(DeviceId::kNvhostGpu), 0xC020481B), nullptr);
  EXPECT_NE(g2.flags & kUsesIoctl2, 0u);
}

TEST(CatalogueChannel, GetClkRateMovedIn701) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostGpu);
  EXPECT_EQ(FindIoctl(dev, 0xC0080014, Fw(7, 0, 0))->name, "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE");
  EXPECT_EQ(FindIoctl(dev, 0xC0080014, Fw(7, 0, 1)), nullptr);
  EXPECT_EQ(FindIoctl(dev, 0xC0080023, Fw(7, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dev, 0xC0080023, Fw(7, 0, 1))->name, "NVHOST_IOCTL_CHANNEL_GET_CLK_RATE");
  EXPECT_EQ(FindIoctl(dev, 0xC0080014, Fw(1, 0, 0))->fields[0].name, "clk_rate");
  EXPECT_EQ(FindIoctl(dev, 0xC0080014, Fw(1, 0, 0))->fields[0].dir, Dir::kOut);
}

TEST(CatalogueChannel, HostSubmitArrays) {
  const IoctlDesc& d = Channel(WithSize(0xC0000001, 16));
  EXPECT_EQ(d.header_size, 16);
  ASSERT_EQ(d.arrays.size(), 5u);
  struct Want {
    const char* name;
    uint32_t elem;
    uint16_t count_at;
    Dir dir;
  };
  const Want want[] = {{"cmdbufs", 12, 0, Dir::kIn},
                       {"relocs", 16, 4, Dir::kIn},
                       {"reloc_shifts", 4, 4, Dir::kIn},
                       {"syncpt_incrs", 20, 8, Dir::kIn},
                       {"fence_thresholds", 4, 12, Dir::kOut}};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(d.arrays[i].name, want[i].name);
    EXPECT_EQ(d.arrays[i].elem->size, want[i].elem) << want[i].name;
    EXPECT_EQ(d.arrays[i].count_from, CountFrom::kField);
    EXPECT_EQ(d.arrays[i].count, want[i].count_at) << want[i].name;
    EXPECT_EQ(d.arrays[i].dir, want[i].dir) << want[i].name;
    EXPECT_EQ(d.arrays[i].buffer, Buffer::kMain);
  }
}

// 1 cmdbuf, 2 relocs (+2 shifts), 1 syncpt incr, 1 fence: 16 + 12 + 32 + 8 + 20 + 4 = 92 bytes.
TEST(CatalogueChannel, HostSubmitLaysOutInSwitchbrewOrder) {
  const IoctlDesc& d = Channel(WithSize(0xC0000001, 92));
  uint32_t hdr[4] = {1, 2, 1, 1};
  auto bytes = std::as_bytes(std::span(hdr));
  std::span<const uint8_t> h(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ArrayLayout l = LayOutArrays(d, Via::kDirect, h, {92});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  const uint64_t offsets[] = {16, 28, 60, 68, 88};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(l.slices[i].offset, offsets[i]) << i;
  EXPECT_EQ(l.out_end, 92u);
  EXPECT_EQ(LayOutArrays(d, Via::kDirect, h, {96}).err, NvError::kCountMismatch);
  EXPECT_EQ(LayOutArrays(d, Via::kDirect, h, {88}).err, NvError::kCountMismatch);
}

TEST(CatalogueChannel, CmdBufferLayouts) {
  for (uint32_t base : {0xC0000009u, 0xC0000025u, 0xC000000Au, 0xC0000026u}) {
    const IoctlDesc& d = Channel(base);
    EXPECT_EQ(d.header_size, 12) << d.name;
    ASSERT_EQ(d.arrays.size(), 1u);
    EXPECT_EQ(d.arrays[0].elem->size, 8u);
    EXPECT_EQ(d.arrays[0].count, 0);  // num_handles is the first word
    const Field* compr = FieldNamed(d.fields, "is_compr");
    ASSERT_NE(compr, nullptr);
    EXPECT_EQ(compr->offset, 8);
    EXPECT_EQ(compr->type, FieldType::kU8);
  }
  // MAP returns each handle's address; UNMAP's second word is reserved.
  EXPECT_EQ(Channel(0xC0000009).arrays[0].elem->fields[1].dir, Dir::kOut);
  EXPECT_EQ(Channel(0xC000000A).arrays[0].elem->fields[1].dir, Dir::kNone);
}

TEST(CatalogueChannel, SubmitGpfifoHeaderHasTheFlagsUnion) {
  for (uint32_t code : {0xC0004808u, 0xC0004819u, 0xC018481Bu, 0xC018481Cu}) {
    const IoctlDesc& d = Channel(code);
    const Field* n = FieldNamed(d.fields, "num_entries");
    const Field* flags = FieldNamed(d.fields, "flags");
    const Field* err = FieldNamed(d.fields, "detailed_error");
    const Field* fence = FieldNamed(d.fields, "fence");
    ASSERT_TRUE(n && flags && err && fence) << d.name;
    EXPECT_EQ(n->offset, 8);
    EXPECT_EQ(flags->offset, 12);
    EXPECT_EQ(flags->dir, Dir::kIn);
    EXPECT_EQ(err->offset, 12);
    EXPECT_EQ(err->dir, Dir::kOut);
    EXPECT_TRUE(err->alt || flags->alt);
    EXPECT_EQ(fence->offset, 16);
    EXPECT_EQ(fence->dir, Dir::kInOut);
    ASSERT_EQ(d.arrays.size(), 1u);
    EXPECT_EQ(d.arrays[0].elem->size, 8u);
    EXPECT_EQ(d.arrays[0].count, 8);
    EXPECT_EQ(d.arrays[0].buffer, IocNr(code) >= 0x1B ? Buffer::kIn2 : Buffer::kMain) << d.name;
  }
}

TEST(CatalogueChannel, GpfifoEntryCountsAgainstTheEncodedSize) {
  const IoctlDesc& d = Channel(0xC0004808);
  uint8_t hdr[24] = {};
  uint32_t n = 3;
  memcpy(hdr + 8, &n, 4);
  EXPECT_EQ(LayOutArrays(d, Via::kDirect, hdr, {24 + 3 * 8}).err, NvError::kSuccess);
  EXPECT_EQ(LayOutArrays(d, Via::kDirect, hdr, {24 + 4 * 8}).err, NvError::kCountMismatch);
  n = 0x10001;  // above the default limit of 65536 entries
  memcpy(hdr + 8, &n, 4);
  EXPECT_EQ(LayOutArrays(d, Via::kDirect, hdr, {24 + uint64_t{n} * 8}).err, NvError::kBadParameter);
  const IoctlDesc& g2 = Channel(0xC018481B);
  n = 2;
  memcpy(hdr + 8, &n, 4);
  EXPECT_EQ(LayOutArrays(g2, Via::kIoctl2, hdr, {24, 16}).err, NvError::kSuccess);
  EXPECT_EQ(LayOutArrays(g2, Via::kIoctl, hdr, {24}).err, NvError::kCountMismatch);
}

TEST(CatalogueChannel, FixedLayoutsFromSwitchbrew) {
  const IoctlDesc& obj = Channel(0xC0104809);
  EXPECT_EQ(FieldNamed(obj.fields, "class_num")->dir, Dir::kIn);
  EXPECT_EQ(FieldNamed(obj.fields, "obj_id")->offset, 8);
  EXPECT_EQ(FieldNamed(obj.fields, "obj_id")->type, FieldType::kU64);
  const IoctlDesc& notif = Channel(0xC0104817);
  EXPECT_EQ(FieldNamed(notif.fields, "info16")->offset, 12);
  EXPECT_EQ(FieldNamed(notif.fields, "info16")->type, FieldType::kU16);
  EXPECT_EQ(FieldNamed(notif.fields, "status")->offset, 14);
  const IoctlDesc& ex = Channel(0x40204818);
  EXPECT_EQ(FieldNamed(ex.fields, "fence")->offset, 12);
  EXPECT_EQ(FieldNamed(ex.fields, "reserved")->count, 3);
  EXPECT_EQ(FieldNamed(Channel(0x80804816).fields, "error_info")->count, 32);
  EXPECT_EQ(FieldNamed(Channel(0x40184806).fields, "payload")->offset, 16);
  EXPECT_TRUE(Channel(0x40184806).may_block());
  EXPECT_EQ(FieldNamed(Channel(0xC018480C).fields, "mem")->offset, 16);
  EXPECT_EQ(FieldNamed(Channel(0xC0104813).fields, "extra")->dir, Dir::kInOut);
}

TEST(CatalogueChannel, FreeObjCtxAnswersNotSupported) {
  const IoctlDesc& d = Channel(0x4008480A);
  EXPECT_NE(d.flags & kFixedAnswer, 0u);
  EXPECT_EQ(d.answer, NvError::kNotSupported);
  EXPECT_EQ(Channel(0xC0104809).flags & kFixedAnswer, 0u);
}

struct NvmapRow {
  uint32_t code;
  uint32_t size;
  const char* name;
  bool not_supported;
};
constexpr NvmapRow kSwitchbrewNvmap[] = {
    {0xC0080101, 8, "NVMAP_IOC_CREATE", false},
    {0x00000102, 0, "NVMAP_IOC_CLAIM", true},
    {0xC0080103, 8, "NVMAP_IOC_FROM_ID", false},
    {0xC0200104, 32, "NVMAP_IOC_ALLOC", false},
    {0xC0180105, 24, "NVMAP_IOC_FREE", false},
    {0xC0280106, 40, "NVMAP_IOC_MMAP", true},
    {0xC0280107, 40, "NVMAP_IOC_WRITE", true},
    {0xC0280108, 40, "NVMAP_IOC_READ", true},
    {0xC00C0109, 12, "NVMAP_IOC_PARAM", false},
    {0xC010010A, 16, "NVMAP_IOC_PIN_MULT", true},
    {0xC010010B, 16, "NVMAP_IOC_UNPIN_MULT", true},
    {0xC008010C, 8, "NVMAP_IOC_CACHE", true},
    {0xC004010D, 4, "NVMAP_IOC_GET_IVC_ID", true},
    {0xC008010E, 8, "NVMAP_IOC_GET_ID", false},
    {0xC004010F, 4, "NVMAP_IOC_FROM_IVC_ID", true},
    {0x40040110, 4, "NVMAP_IOC_SET_ALLOCATION_TAG_LABEL", true},
    {0x00000111, 0, "NVMAP_IOC_RESERVE", true},
    {0x40100112, 16, "NVMAP_IOC_EXPORT_FOR_ARUID", false},
    {0x40100113, 16, "NVMAP_IOC_IS_OWNED_BY_ARUID", false},
    {0x40100114, 16, "NVMAP_IOC_REMOVE_EXPORT_FOR_ARUID", false},
};

TEST(CatalogueNvmap, MatchesSwitchbrew) {
  const DeviceDesc& dev = Device(DeviceId::kNvmap);
  EXPECT_EQ(dev.ioctls.size(), std::size(kSwitchbrewNvmap));
  for (const NvmapRow& row : kSwitchbrewNvmap) {
    const IoctlDesc* d = FindIoctl(dev, row.code);
    ASSERT_NE(d, nullptr) << row.name;
    EXPECT_EQ(d->name, row.name);
    EXPECT_EQ(d->size(), row.size);
    EXPECT_EQ((d->flags & kFixedAnswer) != 0, row.not_supported) << row.name;
    if (row.not_supported) EXPECT_EQ(d->answer, NvError::kNotSupported) << row.name;
  }
}

TEST(CatalogueNvmap, Layouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvmap);
  const IoctlDesc& alloc = *FindIoctl(dev, 0xC0200104);
  EXPECT_EQ(FieldNamed(alloc.fields, "align")->dir, Dir::kInOut);
  EXPECT_EQ(FieldNamed(alloc.fields, "kind")->offset, 16);
  EXPECT_EQ(FieldNamed(alloc.fields, "kind")->type, FieldType::kU8);
  EXPECT_EQ(FieldNamed(alloc.fields, "addr")->offset, 24);
  const IoctlDesc& fr = *FindIoctl(dev, 0xC0180105);
  EXPECT_EQ(FieldNamed(fr.fields, "address")->offset, 8);
  EXPECT_EQ(FieldNamed(fr.fields, "address")->dir, Dir::kOut);
  EXPECT_EQ(FieldNamed(fr.fields, "flags")->offset, 20);
  const IoctlDesc& id = *FindIoctl(dev, 0xC008010E);
  EXPECT_EQ(id.fields[0].name, "id");  // GET_ID puts the result first
  EXPECT_EQ(id.fields[0].dir, Dir::kOut);
  const IoctlDesc& ex = *FindIoctl(dev, 0x40100112);
  EXPECT_EQ(FieldNamed(ex.fields, "handle")->offset, 8);
}

}  // namespace
}  // namespace nvsentry::abi
