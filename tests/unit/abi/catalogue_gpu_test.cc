// The GPU-side device tables against Switchbrew. Every expected value here is typed in from
// Switchbrew (or from docs/guest-abi.md on the variable-length ioctls), never read from abi/.
#include <cstring>
#include <string_view>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

const Field* FindField(const IoctlDesc& d, std::string_view name) {
  for (const Field& f : d.fields)
    if (f.name == name) return &f;
  return nullptr;
}

const Field* FindSubField(const StructDesc& s, std::string_view name) {
  for (const Field& f : s.fields)
    if (f.name == name) return &f;
  return nullptr;
}

struct Row {
  uint32_t code;
  uint32_t size;
  Dir dir;
  const char* name;
};

void ExpectRows(DeviceId id, std::span<const Row> rows, Firmware fw = kLatestFirmware) {
  const DeviceDesc& dev = Device(id);
  for (const Row& r : rows) {
    const IoctlDesc* d = FindIoctl(dev, r.code, fw);
    ASSERT_NE(d, nullptr) << r.name;
    EXPECT_EQ(d->name, r.name);
    EXPECT_EQ(d->code, r.code) << r.name;
    EXPECT_EQ(d->size(), r.size) << r.name;
    EXPECT_EQ(d->dir(), r.dir) << r.name;
  }
}

// ---------------------------------------------------------------- /dev/nvsched-ctrl

constexpr Row kSchedRows[] = {
    {0x00000601, 0, Dir::kNone, "NVSCHED_CTRL_ENABLE"},
    {0x00000602, 0, Dir::kNone, "NVSCHED_CTRL_DISABLE"},
    {0x40180603, 24, Dir::kIn, "NVSCHED_CTRL_ADD_APPLICATION"},
    {0x40180604, 24, Dir::kIn, "NVSCHED_CTRL_UPDATE_APPLICATION"},
    {0x40080605, 8, Dir::kIn, "NVSCHED_CTRL_REMOVE_APPLICATION"},
    {0x80080606, 8, Dir::kOut, "NVSCHED_CTRL_GET_ID"},
    {0x80080607, 8, Dir::kOut, "NVSCHED_CTRL_ADD_RUNLIST"},
    {0x40180608, 24, Dir::kIn, "NVSCHED_CTRL_UPDATE_RUNLIST"},
    {0x40100609, 16, Dir::kIn, "NVSCHED_CTRL_LINK_RUNLIST"},
    {0x4010060A, 16, Dir::kIn, "NVSCHED_CTRL_UNLINK_RUNLIST"},
    {0x4008060B, 8, Dir::kIn, "NVSCHED_CTRL_REMOVE_RUNLIST"},
    {0x8001060C, 1, Dir::kOut, "NVSCHED_CTRL_HAS_OVERRUN_EVENT"},
    {0x8020060D, 32, Dir::kOut, "NVSCHED_CTRL_GET_NEXT_OVERRUN_EVENT"},
    {0x400C060E, 12, Dir::kIn, "NVSCHED_CTRL_PUT_CONDUCTOR_FLIP_FENCE"},
    {0x4008060F, 8, Dir::kIn, "NVSCHED_CTRL_DETACH_APPLICATION"},
    {0x40100610, 16, Dir::kIn, "NVSCHED_CTRL_SET_APPLICATION_MAX_DEBT"},
    {0x40100611, 16, Dir::kIn, "NVSCHED_CTRL_SET_RUNLIST_MAX_DEBT"},
    {0x40010612, 1, Dir::kIn, "NVSCHED_CTRL_OVERRUN_EVENTS_ENABLE"},
};

TEST(CatalogueSched, TableMatchesSwitchbrew) {
  ExpectRows(DeviceId::kNvschedCtrl, kSchedRows);
  // Every row once, plus the pre-3.0.0 GET_NEXT_OVERRUN_EVENT.
  EXPECT_EQ(Device(DeviceId::kNvschedCtrl).ioctls.size(), std::size(kSchedRows) + 1);
  EXPECT_EQ(Device(DeviceId::kNvschedCtrl).path, "/dev/nvsched-ctrl");
}

TEST(CatalogueSched, OverrunEventChangedAt300) {
  const DeviceDesc& dev = Device(DeviceId::kNvschedCtrl);
  const IoctlDesc* v1 = FindIoctl(dev, 0x8010060D, Fw(2, 3, 0));
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->size(), 16u);
  EXPECT_EQ(v1->name, "NVSCHED_CTRL_GET_NEXT_OVERRUN_EVENT");
  EXPECT_EQ(v1->fw.min, 0u);
  EXPECT_EQ(v1->fw.end, Fw(3, 0, 0));
  EXPECT_EQ(FindIoctl(dev, 0x8010060D, Fw(1, 0, 0)), v1);
  EXPECT_EQ(FindIoctl(dev, 0x8010060D, Fw(3, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dev, 0x8010060D, Fw(11, 0, 0)), nullptr);

  const IoctlDesc* v2 = FindIoctl(dev, 0x8020060D, Fw(3, 0, 0));
  ASSERT_NE(v2, nullptr);
  EXPECT_NE(v2, v1);
  EXPECT_EQ(v2->size(), 32u);
  EXPECT_EQ(v2->fw.min, Fw(3, 0, 0));
  EXPECT_EQ(FindIoctl(dev, 0x8020060D, Fw(2, 3, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dev, 0x8020060D, Fw(15, 0, 0)), v2);

  const Field* debt = FindField(*v1, "debt");
  ASSERT_NE(debt, nullptr);
  EXPECT_EQ(debt->offset, 8u);
  EXPECT_EQ(debt->type, FieldType::kU64);
  EXPECT_EQ(FindField(*v1, "unk0"), nullptr);
  const Field* unk1 = FindField(*v2, "unk1");
  ASSERT_NE(unk1, nullptr);
  EXPECT_EQ(unk1->offset, 24u);
  EXPECT_EQ(unk1->dir, Dir::kOut);
}

TEST(CatalogueSched, Layouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvschedCtrl);
  const IoctlDesc* add = FindIoctl(dev, 0x40180603);
  ASSERT_NE(add, nullptr);
  const Field* ts = FindField(*add, "timeslice");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(ts->offset, 16u);
  EXPECT_EQ(ts->type, FieldType::kU64);
  EXPECT_EQ(ts->dir, Dir::kIn);

  const IoctlDesc* fence = FindIoctl(dev, 0x400C060E);
  ASSERT_NE(fence, nullptr);
  const Field* swap = FindField(*fence, "swap_interval");
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(swap->offset, 8u);
  EXPECT_EQ(swap->type, FieldType::kU32);

  const IoctlDesc* has = FindIoctl(dev, 0x8001060C);
  ASSERT_NE(has, nullptr);
  const Field* flag = FindField(*has, "has_overrun");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->type, FieldType::kU8);
  EXPECT_EQ(flag->dir, Dir::kOut);
  EXPECT_TRUE(has->pure());

  const IoctlDesc* link = FindIoctl(dev, 0x40100609);
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(FindField(*link, "application_id")->offset, 8u);
  EXPECT_EQ(link->flags & kOpaque, 0u);

  // The last three rows have no layout in Switchbrew.
  for (uint32_t code : {0x40100610u, 0x40100611u, 0x40010612u}) {
    const IoctlDesc* d = FindIoctl(dev, code);
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->flags & kOpaque, 0u) << std::hex << code;
  }
  const IoctlDesc* enable = FindIoctl(dev, 0x00000601);
  ASSERT_NE(enable, nullptr);
  EXPECT_TRUE(enable->fields.empty());
}

// ---------------------------------------------------------------- /dev/nverpt-ctrl

TEST(CatalogueErpt, TableMatchesSwitchbrew) {
  constexpr Row kRows[] = {
      {0xC1280701, 296, Dir::kInOut, "NVERPT_TELEMETRY_SUBMIT_DATA"},
      {0xCF580702, 3928, Dir::kInOut, "NVERPT_TELEMETRY_SUBMIT_DISPLAY_DATA"},
  };
  ExpectRows(DeviceId::kNverptCtrl, kRows);
  const DeviceDesc& dev = Device(DeviceId::kNverptCtrl);
  EXPECT_EQ(dev.ioctls.size(), 2u);
  // The device came with 3.0.0.
  EXPECT_EQ(dev.fw.min, Fw(3, 0, 0));
  EXPECT_EQ(FindIoctl(dev, 0xC1280701, Fw(2, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(dev, 0xC1280701, Fw(3, 0, 0)), nullptr);
}

TEST(CatalogueErpt, SubmitDataIsNaturallyAligned) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNverptCtrl), 0xC1280701);
  ASSERT_NE(d, nullptr);
  struct Expect {
    const char* name;
    uint16_t offset;
    FieldType type;
    uint16_t count;
  };
  // Offsets with every member at its natural alignment (which is what makes 296).
  constexpr Expect kExpect[] = {
      {"TestU64", 0, FieldType::kU64, 1},
      {"TestU32", 8, FieldType::kU32, 1},
      {"TestI64", 16, FieldType::kS64, 1},
      {"TestI32", 24, FieldType::kS32, 1},
      {"TestString", 28, FieldType::kChar, 32},
      {"TestU8Array", 60, FieldType::kU8, 8},
      {"TestU32Array", 72, FieldType::kU32, 8},
      {"TestU64Array", 112, FieldType::kU64, 8},
      {"TestI32Array", 180, FieldType::kS32, 8},
      {"TestI64Array", 216, FieldType::kS64, 8},
      {"TestI64Array_size", 280, FieldType::kU32, 1},
      {"TestU16", 284, FieldType::kU16, 1},
      {"TestU8", 286, FieldType::kU8, 1},
      {"TestI16", 288, FieldType::kS16, 1},
      {"TestI8", 290, FieldType::kS8, 1},
      {"padding1", 291, FieldType::kU8, 5},
  };
  for (const Expect& e : kExpect) {
    const Field* f = FindField(*d, e.name);
    ASSERT_NE(f, nullptr) << e.name;
    EXPECT_EQ(f->offset, e.offset) << e.name;
    EXPECT_EQ(f->type, e.type) << e.name;
    EXPECT_EQ(f->count, e.count) << e.name;
  }
  EXPECT_EQ(FindField(*d, "TestU64")->dir, Dir::kIn);
  EXPECT_EQ(FindField(*d, "padding1")->dir, Dir::kNone);
}

TEST(CatalogueErpt, SubmitDisplayData) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNverptCtrl), 0xCF580702);
  ASSERT_NE(d, nullptr);
  const Field* err = FindField(*d, "ErrorString");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->offset, 112u);
  EXPECT_EQ(err->count, 64u);
  const Field* log = FindField(*d, "VideoLog");
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->offset, 180u);
  EXPECT_EQ(log->count, 3712u);
  const Field* log_size = FindField(*d, "VideoLog_size");
  ASSERT_NE(log_size, nullptr);
  EXPECT_EQ(log_size->offset, 3892u);
  EXPECT_EQ(FindField(*d, "DARHeight")->offset, 32u);
  EXPECT_EQ(FindField(*d, "MatrixCoefficients")->type, FieldType::kU8);
}

// ---------------------------------------------------------------- /dev/nvhost-as-gpu

TEST(CatalogueAs, TableMatchesSwitchbrew) {
  constexpr Row kRows[] = {
      {0x40044101, 4, Dir::kIn, "NVGPU_AS_IOCTL_BIND_CHANNEL"},
      {0xC0184102, 24, Dir::kInOut, "NVGPU_AS_IOCTL_ALLOC_SPACE"},
      {0xC0104103, 16, Dir::kInOut, "NVGPU_AS_IOCTL_FREE_SPACE"},
      {0xC0184104, 24, Dir::kInOut, "NVGPU_AS_IOCTL_MAP_BUFFER"},
      {0xC0084105, 8, Dir::kInOut, "NVGPU_AS_IOCTL_UNMAP_BUFFER"},
      {0xC0284106, 40, Dir::kInOut, "NVGPU_AS_IOCTL_MAP_BUFFER_EX"},
      {0x40104107, 16, Dir::kIn, "NVGPU_AS_IOCTL_ALLOC_AS"},
      {0xC0404108, 64, Dir::kInOut, "NVGPU_AS_IOCTL_GET_VA_REGIONS"},
      {0x40284109, 40, Dir::kIn, "NVGPU_AS_IOCTL_ALLOC_AS_EX"},
      {0xC038410A, 56, Dir::kInOut, "NVGPU_AS_IOCTL_MAP_BUFFER_EX2"},
  };
  ExpectRows(DeviceId::kNvhostAsGpu, kRows);
  EXPECT_EQ(Device(DeviceId::kNvhostAsGpu).ioctls.size(), std::size(kRows) + 1);  // + REMAP
}

TEST(CatalogueAs, AllocSpaceUnion) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvhostAsGpu), 0xC0184102);
  ASSERT_NE(d, nullptr);
  const Field* offset = FindField(*d, "offset");
  const Field* align = FindField(*d, "align");
  ASSERT_NE(offset, nullptr);
  ASSERT_NE(align, nullptr);
  EXPECT_EQ(offset->offset, 16u);
  EXPECT_EQ(align->offset, 16u);
  EXPECT_EQ(offset->type, FieldType::kU64);
  EXPECT_EQ(offset->dir, Dir::kOut);
  EXPECT_EQ(align->dir, Dir::kIn);
  EXPECT_TRUE(align->alt);
  EXPECT_EQ(FindField(*d, "padding")->dir, Dir::kNone);
  EXPECT_EQ(FindField(*d, "flags")->offset, 8u);
}

TEST(CatalogueAs, MapBufferLayouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostAsGpu);
  const IoctlDesc* map = FindIoctl(dev, 0xC0184104);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(FindField(*map, "mem_id")->offset, 8u);
  EXPECT_EQ(FindField(*map, "mem_id")->dir, Dir::kIn);
  EXPECT_EQ(FindField(*map, "reserved0")->dir, Dir::kNone);

  const IoctlDesc* ex = FindIoctl(dev, 0xC0284106);
  ASSERT_NE(ex, nullptr);
  EXPECT_EQ(FindField(*ex, "kind")->dir, Dir::kInOut);
  EXPECT_EQ(FindField(*ex, "mapping_size")->offset, 24u);
  EXPECT_EQ(FindField(*ex, "offset")->offset, 32u);

  const IoctlDesc* ex2 = FindIoctl(dev, 0xC038410A);
  ASSERT_NE(ex2, nullptr);
  EXPECT_EQ(FindField(*ex2, "vma_addr")->offset, 40u);
  EXPECT_EQ(FindField(*ex2, "pages")->offset, 48u);
  EXPECT_EQ(FindField(*ex2, "pages")->type, FieldType::kU32);
  EXPECT_EQ(FindField(*ex2, "reserved1")->dir, Dir::kNone);

  const IoctlDesc* as = FindIoctl(dev, 0x40104107);
  ASSERT_NE(as, nullptr);
  EXPECT_EQ(FindField(*as, "as_fd")->type, FieldType::kS32);
  const IoctlDesc* as_ex = FindIoctl(dev, 0x40284109);
  ASSERT_NE(as_ex, nullptr);
  EXPECT_EQ(FindField(*as_ex, "va_range_split")->offset, 32u);
  // The clients' order (libnx nvioctlNvhostAsGpu_InitializeEx, yuzu IoctlAllocAsEx), not the
  // wiki's: flags first, big_page_size at offset 8.
  EXPECT_EQ(FindField(*as_ex, "flags")->offset, 0u);
  EXPECT_EQ(FindField(*as_ex, "as_fd")->offset, 4u);
  EXPECT_EQ(FindField(*as_ex, "big_page_size")->offset, 8u);
}

TEST(CatalogueAs, GetVaRegionsUsesIoctl3) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvhostAsGpu), 0xC0404108);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->pure());
  EXPECT_NE(d->flags & kUsesIoctl3, 0u);
  EXPECT_EQ(d->flags & kUsesIoctl2, 0u);
  EXPECT_FALSE(d->variable());
  const Field* size = FindField(*d, "buf_size");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->offset, 8u);
  EXPECT_EQ(size->dir, Dir::kInOut);
  const Field* regions = FindField(*d, "regions");
  ASSERT_NE(regions, nullptr);
  EXPECT_EQ(regions->offset, 16u);
  EXPECT_EQ(regions->count, 2u);
  EXPECT_EQ(regions->type, FieldType::kStruct);
  ASSERT_NE(regions->sub, nullptr);
  EXPECT_EQ(regions->sub->size, 24u);
  EXPECT_EQ(FindSubField(*regions->sub, "pages")->offset, 16u);

  ASSERT_EQ(d->arrays.size(), 1u);
  EXPECT_EQ(d->arrays[0].buffer, Buffer::kOut2);
  EXPECT_EQ(d->arrays[0].count_from, CountFrom::kRest);
  EXPECT_EQ(d->arrays[0].elem->size, 24u);

  // Through Ioctl3 with room for two regions, two are written.
  uint8_t header[64] = {};
  ArrayLayout l = LayOutArrays(*d, Via::kIoctl3, header, {64, 0, 48});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  ASSERT_EQ(l.slices.size(), 1u);
  EXPECT_EQ(l.slices[0].count, 2u);
  EXPECT_EQ(l.out2_bytes, 48u);
  // Through plain Ioctl there is no second buffer.
  l = LayOutArrays(*d, Via::kIoctl, header, {64});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.slices[0].count, 0u);
}

TEST(CatalogueAs, RemapIsVariable) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostAsGpu);
  // Three 20-byte ops: the guest's code carries 60 in its size bits.
  const uint32_t guest = 0xC0000000u | (60u << 16) | 0x4114u;
  const IoctlDesc* d = FindIoctl(dev, guest);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVGPU_AS_IOCTL_REMAP");
  EXPECT_TRUE(d->variable());
  EXPECT_EQ(d->code, 0xC0004114u);
  EXPECT_EQ(d->fixed_size(), 0u);
  EXPECT_EQ(FindIoctl(dev, 0xC0144114u), d);  // one op

  ASSERT_EQ(d->arrays.size(), 1u);
  const ArrayDesc& a = d->arrays[0];
  EXPECT_EQ(a.buffer, Buffer::kMain);
  EXPECT_EQ(a.count_from, CountFrom::kRest);
  EXPECT_EQ(a.max_count, 65536u);
  EXPECT_EQ(a.dir, Dir::kIn);
  ASSERT_NE(a.elem, nullptr);
  EXPECT_EQ(a.elem->size, 20u);
  const Field* kind = FindSubField(*a.elem, "kind");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->offset, 2u);
  EXPECT_EQ(kind->type, FieldType::kU16);
  EXPECT_EQ(FindSubField(*a.elem, "num_pages")->offset, 16u);

  ArrayLayout l = LayOutArrays(*d, Via::kDirect, {}, {60});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.slices[0].count, 3u);
  l = LayOutArrays(*d, Via::kDirect, {}, {61});
  EXPECT_NE(l.err, NvError::kSuccess);  // not a whole number of ops
}

// ---------------------------------------------------------------- /dev/nvhost-dbg-gpu

constexpr Row kDbgRows[] = {
    {0x40084401, 8, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_BIND_CHANNEL"},
    {0x40084403, 8, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_EVENTS_CTRL"},
    {0x40044404, 4, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_POWERGATE"},
    {0x40044405, 4, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_SMPC_CTXSW_MODE"},
    {0x40044406, 4, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_SUSPEND_RESUME_ALL_SMS"},
    {0xC0184407, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_PERFBUF_MAP"},
    {0x40084408, 8, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_PERFBUF_UNMAP"},
    {0x40084409, 8, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_PC_SAMPLING"},
    {0x4008440A, 8, Dir::kIn, "NVGPU_DBG_GPU_IOCTL_TIMEOUT"},
    {0x8008440B, 8, Dir::kOut, "NVGPU_DBG_GPU_IOCTL_GET_TIMEOUT"},
    {0x8004440C, 4, Dir::kOut, "NVGPU_DBG_GPU_IOCTL_GET_GR_CONTEXT_SIZE"},
    {0x0000440D, 0, Dir::kNone, "NVGPU_DBG_GPU_IOCTL_GET_GR_CONTEXT"},
    {0xC018440E, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_ACCESS_FB_MEMORY"},
    {0xC018440F, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_NUM_PDES"},
    {0xC0104410, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PDES"},
    {0xC0184411, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_NUM_PTES"},
    {0xC0104412, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PTES"},
    {0xC0684413, 104, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_COMPTAG_INFO"},
    {0xC0184414, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_READ_COMPTAGS"},
    {0xC0184415, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_WRITE_COMPTAGS"},
    {0xC0104416, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_RESERVE_COMPTAGS"},
    {0xC0104417, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_FREE_RESERVED_COMPTAGS"},
    {0xC0104418, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_RESERVE_PA"},
    {0xC0104419, 16, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_FREE_RESERVED_PA"},
    {0xC018441A, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_LAZY_ALLOC_RESERVED_PA"},
    {0xC020441B, 32, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_LAZY_ALLOC_RESERVED_PA_EX"},
    {0xC084441C, 132, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_SETTINGS"},
    {0xC018441D, 24, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_SERIAL_NUMBER"},
    {0xC020441E, 32, Dir::kInOut, "NVGPU_DBG_GPU_IOCTL_GET_GPU_VA_RANGE_PAGES"},
};

TEST(CatalogueDbg, TableMatchesSwitchbrew) {
  ExpectRows(DeviceId::kNvhostDbgGpu, kDbgRows);
  EXPECT_EQ(Device(DeviceId::kNvhostDbgGpu).ioctls.size(), std::size(kDbgRows) + 1);  // + REG_OPS
}

TEST(CatalogueDbg, ProfGpuIsTheSameTable) {
  ExpectRows(DeviceId::kNvhostProfGpu, kDbgRows);
  EXPECT_EQ(Device(DeviceId::kNvhostProfGpu).ioctls.size(),
            Device(DeviceId::kNvhostDbgGpu).ioctls.size());
  EXPECT_NE(Device(DeviceId::kNvhostProfGpu).flags & kNeedsDebugMode, 0u);
  EXPECT_NE(Device(DeviceId::kNvhostDbgGpu).flags & kNeedsDebugMode, 0u);
}

TEST(CatalogueDbg, Firmware1100Additions) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostDbgGpu);
  for (uint32_t code : {0xC020441Bu, 0xC084441Cu, 0xC018441Du, 0xC020441Eu}) {
    EXPECT_EQ(FindIoctl(dev, code, Fw(10, 2, 0)), nullptr) << std::hex << code;
    const IoctlDesc* d = FindIoctl(dev, code, Fw(11, 0, 0));
    ASSERT_NE(d, nullptr) << std::hex << code;
    EXPECT_EQ(d->fw.min, Fw(11, 0, 0));
  }
  // Older rows exist on every version.
  EXPECT_NE(FindIoctl(dev, 0xC018441A, Fw(1, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(dev, 0x40084401, Fw(1, 0, 0)), nullptr);
}

TEST(CatalogueDbg, RowsWithoutLayoutAreOpaque) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostDbgGpu);
  for (uint32_t code : {0x40084401u, 0xC0184407u, 0x8008440Bu, 0xC0684413u, 0xC084441Cu}) {
    const IoctlDesc* d = FindIoctl(dev, code);
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->flags & kOpaque, 0u) << d->name;
  }
  const IoctlDesc* timeout = FindIoctl(dev, 0x8008440B);
  EXPECT_TRUE(timeout->pure());
}

TEST(CatalogueDbg, RegOpsIsVariable) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostDbgGpu);
  // Two ops: 16-byte header plus 2 * 32.
  const uint32_t guest = 0xC0000000u | (80u << 16) | 0x4402u;
  const IoctlDesc* d = FindIoctl(dev, guest);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVGPU_DBG_GPU_IOCTL_REG_OPS");
  EXPECT_TRUE(d->variable());
  EXPECT_EQ(d->code, 0xC0004402u);
  EXPECT_EQ(d->fixed_size(), 16u);
  const Field* num = FindField(*d, "num_ops");
  ASSERT_NE(num, nullptr);
  EXPECT_EQ(num->offset, 8u);
  EXPECT_EQ(num->type, FieldType::kU32);
  ASSERT_EQ(d->arrays.size(), 1u);
  const ArrayDesc& a = d->arrays[0];
  EXPECT_EQ(a.buffer, Buffer::kMain);
  EXPECT_EQ(a.count_from, CountFrom::kField);
  EXPECT_EQ(a.count, 8u);
  EXPECT_EQ(a.max_count, 4096u);
  EXPECT_EQ(a.dir, Dir::kInOut);
  EXPECT_EQ(a.elem->size, 32u);

  uint8_t header[16] = {};
  const uint32_t two = 2;
  std::memcpy(header + 8, &two, 4);
  ArrayLayout l = LayOutArrays(*d, Via::kDirect, header, {80});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.slices[0].offset, 16u);
  EXPECT_EQ(l.slices[0].count, 2u);
  EXPECT_EQ(l.out_end, 80u);
  // A code whose size disagrees with num_ops.
  l = LayOutArrays(*d, Via::kDirect, header, {48});
  EXPECT_EQ(l.err, NvError::kCountMismatch);
  // Above the limit.
  const uint32_t many = 4097;
  std::memcpy(header + 8, &many, 4);
  l = LayOutArrays(*d, Via::kDirect, header, {16 + 4097ull * 32});
  EXPECT_NE(l.err, NvError::kSuccess);
}

TEST(CatalogueDbg, SecondBufferIoctls) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostDbgGpu);
  // Switchbrew's "Uses Ioctl3" rows.
  for (uint32_t code : {0x0000440Du, 0xC0104410u, 0xC0104412u, 0xC0184414u}) {
    const IoctlDesc* d = FindIoctl(dev, code);
    ASSERT_NE(d, nullptr);
    EXPECT_NE(d->flags & kUsesIoctl3, 0u) << d->name;
    EXPECT_EQ(d->flags & kUsesIoctl2, 0u) << d->name;
    ASSERT_EQ(d->arrays.size(), 1u) << d->name;
    EXPECT_EQ(d->arrays[0].buffer, Buffer::kOut2) << d->name;
    EXPECT_EQ(d->arrays[0].count_from, CountFrom::kRest) << d->name;
  }
  // Switchbrew's "Uses Ioctl2" row.
  const IoctlDesc* w = FindIoctl(dev, 0xC0184415);
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->flags & kUsesIoctl2, 0u);
  EXPECT_EQ(w->flags & kUsesIoctl3, 0u);
  EXPECT_NE(w->flags & kOpaque, 0u);
  ASSERT_EQ(w->arrays.size(), 1u);
  EXPECT_EQ(w->arrays[0].buffer, Buffer::kIn2);
  EXPECT_EQ(w->arrays[0].dir, Dir::kIn);

  uint8_t header[24] = {};
  ArrayLayout l = LayOutArrays(*w, Via::kIoctl2, header, {24, 100, 0});
  ASSERT_EQ(l.err, NvError::kSuccess) << l.problem;
  EXPECT_EQ(l.in2_bytes, 100u);

  // Rows without "Uses Ioctl*" take no second buffer.
  const IoctlDesc* num = FindIoctl(dev, 0xC018440F);
  ASSERT_NE(num, nullptr);
  EXPECT_EQ(num->flags & (kUsesIoctl2 | kUsesIoctl3), 0u);
  EXPECT_TRUE(num->arrays.empty());
}

}  // namespace
}  // namespace nvsentry::abi
