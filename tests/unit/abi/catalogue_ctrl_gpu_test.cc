// /dev/nvhost-ctrl-gpu against Switchbrew, typed in here from Switchbrew (not from abi/).
#include <array>
#include <cstdint>
#include <string_view>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

struct CtrlGpuRow {
  uint32_t code;
  Dir dir;
  uint32_t size;
  const char* name;
};

// Switchbrew's table for the latest firmware (WAIT_FOR_PAUSE's 6.1.0+ code).
constexpr CtrlGpuRow kSwitchbrewCtrlGpu[] = {
    {0x80044701, Dir::kOut, 4, "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE"},
    {0x80284702, Dir::kOut, 40, "NVGPU_GPU_IOCTL_ZCULL_GET_INFO"},
    {0x402C4703, Dir::kIn, 44, "NVGPU_GPU_IOCTL_ZBC_SET_TABLE"},
    {0xC0344704, Dir::kInOut, 52, "NVGPU_GPU_IOCTL_ZBC_QUERY_TABLE"},
    {0xC0B04705, Dir::kInOut, 176, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS"},
    {0xC0184706, Dir::kInOut, 24, "NVGPU_GPU_IOCTL_GET_TPC_MASKS"},
    {0x40084707, Dir::kIn, 8, "NVGPU_GPU_IOCTL_FLUSH_L2"},
    {0x4008470D, Dir::kIn, 8, "NVGPU_GPU_IOCTL_INVAL_ICACHE"},
    {0x4008470E, Dir::kIn, 8, "NVGPU_GPU_IOCTL_SET_MMU_DEBUG_MODE"},
    {0x4010470F, Dir::kIn, 16, "NVGPU_GPU_IOCTL_SET_SM_DEBUG_MODE"},
    {0xC0304710, Dir::kInOut, 48, "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE"},
    {0x80084711, Dir::kOut, 8, "NVGPU_GPU_IOCTL_GET_TPC_EXCEPTION_EN_STATUS"},
    {0x80084712, Dir::kOut, 8, "NVGPU_GPU_IOCTL_NUM_VSMS"},
    {0xC0044713, Dir::kInOut, 4, "NVGPU_GPU_IOCTL_VSMS_MAPPING"},
    {0x80084714, Dir::kOut, 8, "NVGPU_GPU_IOCTL_ZBC_GET_ACTIVE_SLOT_MASK"},
    {0x80044715, Dir::kOut, 4, "NVGPU_GPU_IOCTL_PMU_GET_GPU_LOAD"},
    {0x40084716, Dir::kIn, 8, "NVGPU_GPU_IOCTL_SET_CG_CONTROLS"},
    {0xC0084717, Dir::kInOut, 8, "NVGPU_GPU_IOCTL_GET_CG_CONTROLS"},
    {0x40084718, Dir::kIn, 8, "NVGPU_GPU_IOCTL_SET_PG_CONTROLS"},
    {0xC0084719, Dir::kInOut, 8, "NVGPU_GPU_IOCTL_GET_PG_CONTROLS"},
    {0x8018471A, Dir::kOut, 24, "NVGPU_GPU_IOCTL_PMU_GET_ELPG_RESIDENCY_GATING"},
    {0xC008471B, Dir::kInOut, 8, "NVGPU_GPU_IOCTL_GET_ERROR_CHANNEL_USER_DATA"},
    {0xC010471C, Dir::kInOut, 16, "NVGPU_GPU_IOCTL_GET_GPU_TIME"},
    {0xC108471D, Dir::kInOut, 264, "NVGPU_GPU_IOCTL_GET_CPU_TIME_CORRELATION_INFO"},
};

const DeviceDesc& CtrlGpu() { return Device(DeviceId::kNvhostCtrlGpu); }

const Field* FieldNamed(const IoctlDesc& d, std::string_view name) {
  for (const Field& f : d.fields)
    if (f.name == name) return &f;
  return nullptr;
}

const Field* SubFieldNamed(const StructDesc& s, std::string_view name) {
  for (const Field& f : s.fields)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(CatalogueCtrlGpu, DeviceNodeAndMagic) {
  const DeviceDesc* dev = FindDeviceByPath("/dev/nvhost-ctrl-gpu");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->id, DeviceId::kNvhostCtrlGpu);
  ASSERT_EQ(dev->magics.size(), 1u);
  EXPECT_EQ(dev->magics[0], 0x47);  // 'G'
}

TEST(CatalogueCtrlGpu, EveryRowOfTheSeedTable) {
  const DeviceDesc& dev = CtrlGpu();
  // 24 rows, plus the pre-6.1.0 WAIT_FOR_PAUSE code as its own entry.
  EXPECT_EQ(dev.ioctls.size(), std::size(kSwitchbrewCtrlGpu) + 1);
  for (const CtrlGpuRow& row : kSwitchbrewCtrlGpu) {
    const IoctlDesc* d = FindIoctl(dev, row.code, kLatestFirmware);
    ASSERT_NE(d, nullptr) << row.name;
    EXPECT_EQ(d->name, row.name);
    EXPECT_EQ(d->code, row.code) << row.name;
    EXPECT_EQ(d->size(), row.size) << row.name;
    EXPECT_EQ(d->dir(), row.dir) << row.name;
    EXPECT_EQ(IocMagic(row.code), 0x47u) << row.name;
    EXPECT_FALSE(d->variable()) << row.name;
    EXPECT_FALSE(d->summary.empty()) << row.name;
    EXPECT_EQ(d->flags & kOpaque, 0u) << row.name << ": Switchbrew gives every layout";
    EXPECT_EQ(d->flags & kFixedAnswer, 0u) << row.name << ": Switchbrew fixes no answer here";
  }
}

TEST(CatalogueCtrlGpu, WaitForPauseChangesAt610) {
  const DeviceDesc& dev = CtrlGpu();
  constexpr uint32_t kOld = 0xC0084710, kNew = 0xC0304710;

  const IoctlDesc* old_before = FindIoctl(dev, kOld, Fw(6, 0, 1));
  ASSERT_NE(old_before, nullptr);
  EXPECT_EQ(old_before->size(), 8u);
  EXPECT_EQ(old_before->name, "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE");
  EXPECT_EQ(old_before->fw.min, 0u);
  EXPECT_EQ(old_before->fw.end, Fw(6, 1, 0));
  EXPECT_TRUE(old_before->may_block());
  ASSERT_EQ(old_before->fields.size(), 1u);
  EXPECT_EQ(old_before->fields[0].name, "pwarpstate");
  EXPECT_EQ(old_before->fields[0].type, FieldType::kU64);
  EXPECT_EQ(old_before->fields[0].dir, Dir::kIn);
  EXPECT_EQ(FindIoctl(dev, kOld, Fw(1, 0, 0)), old_before);
  EXPECT_EQ(FindIoctl(dev, kOld, Fw(6, 1, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dev, kOld, kLatestFirmware), nullptr);

  const IoctlDesc* new_after = FindIoctl(dev, kNew, Fw(6, 1, 0));
  ASSERT_NE(new_after, nullptr);
  EXPECT_NE(new_after, old_before);
  EXPECT_EQ(new_after->size(), 48u);
  EXPECT_EQ(new_after->fw.min, Fw(6, 1, 0));
  EXPECT_TRUE(new_after->may_block());
  EXPECT_EQ(FindIoctl(dev, kNew, Fw(6, 0, 2)), nullptr);
  EXPECT_EQ(FindIoctl(dev, kNew, Fw(3, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dev, kNew, kLatestFirmware), new_after);
  const Field* f = FieldNamed(*new_after, "sm1_paused_warps");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 40u);
  EXPECT_EQ(f->type, FieldType::kU64);
  EXPECT_EQ(f->dir, Dir::kOut);
  f = FieldNamed(*new_after, "sm0_trapped_warps");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 8u);
}

TEST(CatalogueCtrlGpu, GetCharacteristicsLayout) {
  const IoctlDesc* d = FindIoctl(CtrlGpu(), 0xC0B04705);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->pure());
  EXPECT_NE(d->flags & kUsesIoctl3, 0u);
  EXPECT_EQ(d->flags & kUsesIoctl2, 0u);
  EXPECT_TRUE(d->fw.always());

  const Field* size = FieldNamed(*d, "gpu_characteristics_buf_size");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->offset, 0u);
  EXPECT_EQ(size->type, FieldType::kU64);
  EXPECT_EQ(size->dir, Dir::kInOut);
  const Field* addr = FieldNamed(*d, "gpu_characteristics_buf_addr");
  ASSERT_NE(addr, nullptr);
  EXPECT_EQ(addr->offset, 8u);
  EXPECT_EQ(addr->dir, Dir::kIn);
  const Field* gc = FieldNamed(*d, "gc");
  ASSERT_NE(gc, nullptr);
  EXPECT_EQ(gc->offset, 16u);
  EXPECT_EQ(gc->type, FieldType::kStruct);
  EXPECT_EQ(gc->dir, Dir::kOut);
  ASSERT_NE(gc->sub, nullptr);
  EXPECT_EQ(gc->sub->size, 0xA0u);

  // Offsets inside gpu_characteristics, counted by hand from Switchbrew's member list.
  struct Expect {
    const char* name;
    uint16_t offset;
    FieldType type;
  };
  constexpr Expect kMembers[] = {
      {"arch", 0, FieldType::kU32},
      {"l2_cache_size", 16, FieldType::kU64},
      {"num_tpc_per_gpc", 32, FieldType::kU32},
      {"gpu_va_bit_count", 72, FieldType::kU32},
      {"flags", 80, FieldType::kU64},
      {"twod_class", 88, FieldType::kU32},
      {"dma_copy_class", 108, FieldType::kU32},
      {"rop_l2_en_mask_1", 140, FieldType::kU32},
      {"chipname", 144, FieldType::kU64},
      {"gr_compbit_store_base_hw", 152, FieldType::kU64},
  };
  for (const Expect& e : kMembers) {
    const Field* f = SubFieldNamed(*gc->sub, e.name);
    ASSERT_NE(f, nullptr) << e.name;
    EXPECT_EQ(f->offset, e.offset) << e.name;
    EXPECT_EQ(f->type, e.type) << e.name;
  }
  EXPECT_EQ(gc->sub->fields.size(), 35u);

  ASSERT_EQ(d->arrays.size(), 1u);
  const ArrayDesc& a = d->arrays[0];
  EXPECT_EQ(a.buffer, Buffer::kOut2);
  EXPECT_EQ(a.count_from, CountFrom::kRest);
  EXPECT_EQ(a.dir, Dir::kOut);
  ASSERT_NE(a.elem, nullptr);
  EXPECT_EQ(a.elem->size, 0xA0u);
  EXPECT_GE(a.max_count, 1u);
}

TEST(CatalogueCtrlGpu, GetTpcMasksLayout) {
  const IoctlDesc* d = FindIoctl(CtrlGpu(), 0xC0184706);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->pure());
  EXPECT_NE(d->flags & kUsesIoctl3, 0u);
  const Field* sz = FieldNamed(*d, "mask_buf_size");
  ASSERT_NE(sz, nullptr);
  EXPECT_EQ(sz->offset, 0u);
  EXPECT_EQ(sz->type, FieldType::kU32);
  EXPECT_EQ(sz->dir, Dir::kIn);
  const Field* res = FieldNamed(*d, "reserved");
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->offset, 4u);
  EXPECT_EQ(res->count, 3u);
  const Field* buf = FieldNamed(*d, "mask_buf");
  ASSERT_NE(buf, nullptr);
  EXPECT_EQ(buf->offset, 16u);
  EXPECT_EQ(buf->type, FieldType::kU64);
  EXPECT_EQ(buf->dir, Dir::kOut);
  ASSERT_EQ(d->arrays.size(), 1u);
  EXPECT_EQ(d->arrays[0].buffer, Buffer::kOut2);
  EXPECT_EQ(d->arrays[0].count_from, CountFrom::kRest);
  ASSERT_NE(d->arrays[0].elem, nullptr);
  EXPECT_EQ(d->arrays[0].elem->size, 4u);  // one u32 mask per GPC
  EXPECT_GE(d->arrays[0].max_count, 2u);   // Switchbrew's GPU reports two
}

TEST(CatalogueCtrlGpu, TpcMasksThroughIoctl3FillTheSecondBuffer) {
  const IoctlDesc* d = FindIoctl(CtrlGpu(), 0xC0184706);
  ASSERT_NE(d, nullptr);
  std::array<uint8_t, 24> header{};
  ArrayLayout l = LayOutArrays(*d, Via::kIoctl3, header, {24, 0, 8});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  ASSERT_EQ(l.slices.size(), 1u);
  EXPECT_EQ(l.slices[0].count, 2u);
  EXPECT_EQ(l.out2_bytes, 8u);
  // Through plain Ioctl there is no second buffer and nothing goes there.
  l = LayOutArrays(*d, Via::kIoctl, header, {24});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.out2_bytes, 0u);
}

TEST(CatalogueCtrlGpu, ZbcTables) {
  const IoctlDesc* set = FindIoctl(CtrlGpu(), 0x402C4703);
  ASSERT_NE(set, nullptr);
  EXPECT_FALSE(set->pure());
  const Field* f = FieldNamed(*set, "color_l2");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 16u);
  EXPECT_EQ(f->count, 4u);
  EXPECT_EQ(f->dir, Dir::kIn);
  f = FieldNamed(*set, "type");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 40u);

  const IoctlDesc* query = FindIoctl(CtrlGpu(), 0xC0344704);
  ASSERT_NE(query, nullptr);
  f = FieldNamed(*query, "color_ds");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dir, Dir::kOut);
  f = FieldNamed(*query, "ref_cnt");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 36u);
  EXPECT_EQ(f->dir, Dir::kOut);
  f = FieldNamed(*query, "index_size");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 48u);
  EXPECT_EQ(f->type, FieldType::kU32);
  EXPECT_EQ(f->dir, Dir::kInOut);
}

TEST(CatalogueCtrlGpu, ZcullAndSmallGetters) {
  const IoctlDesc* ctx = FindIoctl(CtrlGpu(), 0x80044701);
  ASSERT_NE(ctx, nullptr);
  EXPECT_TRUE(ctx->pure());
  ASSERT_EQ(ctx->fields.size(), 1u);
  EXPECT_EQ(ctx->fields[0].name, "size");
  EXPECT_EQ(ctx->fields[0].dir, Dir::kOut);

  const IoctlDesc* info = FindIoctl(CtrlGpu(), 0x80284702);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->fields.size(), 10u);
  const Field* f = FieldNamed(*info, "subregion_count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 36u);
  f = FieldNamed(*info, "region_byte_multiplier");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 16u);

  const IoctlDesc* vsms = FindIoctl(CtrlGpu(), 0xC0044713);
  ASSERT_NE(vsms, nullptr);
  f = FieldNamed(*vsms, "sm1_tpc_index");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 3u);
  EXPECT_EQ(f->type, FieldType::kU8);
  EXPECT_EQ(f->dir, Dir::kOut);

  const IoctlDesc* cg = FindIoctl(CtrlGpu(), 0xC0084717);
  ASSERT_NE(cg, nullptr);
  EXPECT_TRUE(cg->pure());
  f = FieldNamed(*cg, "cg_mask");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dir, Dir::kIn);
  f = FieldNamed(*cg, "cg_value");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 4u);
  EXPECT_EQ(f->dir, Dir::kOut);

  const IoctlDesc* set_pg = FindIoctl(CtrlGpu(), 0x40084718);
  ASSERT_NE(set_pg, nullptr);
  EXPECT_FALSE(set_pg->pure());
  f = FieldNamed(*set_pg, "pg_value");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dir, Dir::kIn);
}

TEST(CatalogueCtrlGpu, DebugModesAndTime) {
  const IoctlDesc* sm = FindIoctl(CtrlGpu(), 0x4010470F);
  ASSERT_NE(sm, nullptr);
  EXPECT_FALSE(sm->pure());
  const Field* f = FieldNamed(*sm, "channel_fd");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, FieldType::kS32);
  f = FieldNamed(*sm, "sms");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 8u);
  EXPECT_EQ(f->type, FieldType::kU64);

  const IoctlDesc* icache = FindIoctl(CtrlGpu(), 0x4008470D);
  ASSERT_NE(icache, nullptr);
  f = FieldNamed(*icache, "channel_fd");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, FieldType::kS32);
  EXPECT_EQ(f->dir, Dir::kIn);

  const IoctlDesc* gpu_time = FindIoctl(CtrlGpu(), 0xC010471C);
  ASSERT_NE(gpu_time, nullptr);
  EXPECT_TRUE(gpu_time->pure());
  f = FieldNamed(*gpu_time, "gpu_timestamp");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 0u);
  EXPECT_EQ(f->dir, Dir::kOut);

  const IoctlDesc* corr = FindIoctl(CtrlGpu(), 0xC108471D);
  ASSERT_NE(corr, nullptr);
  f = FieldNamed(*corr, "samples");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 0u);
  EXPECT_EQ(f->count, 16u);
  EXPECT_EQ(f->type, FieldType::kStruct);
  EXPECT_EQ(f->dir, Dir::kOut);
  ASSERT_NE(f->sub, nullptr);
  EXPECT_EQ(f->sub->size, 16u);
  f = FieldNamed(*corr, "count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 256u);
  EXPECT_EQ(f->dir, Dir::kIn);
  f = FieldNamed(*corr, "source_id");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, 260u);
  EXPECT_EQ(f->dir, Dir::kIn);
}

TEST(CatalogueCtrlGpu, OnlyWaitForPauseBlocks) {
  for (const IoctlDesc& d : CtrlGpu().ioctls)
    EXPECT_EQ(d.may_block(), d.name == "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE") << d.name;
}

TEST(CatalogueCtrlGpu, UnknownCodesAreNotFound) {
  EXPECT_EQ(FindIoctl(CtrlGpu(), 0xC0004708), nullptr);  // nr 8..0xC are absent from Switchbrew
  EXPECT_EQ(FindIoctl(CtrlGpu(), 0x80084701), nullptr);  // right nr, wrong size
  EXPECT_EQ(FindIoctl(CtrlGpu(), 0x4004471E), nullptr);
}

}  // namespace
}  // namespace nvsentry::abi
