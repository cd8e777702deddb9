// The display nodes against Switchbrew (/dev/nvdisp-ctrl, nvdisp-disp0/1, nvcec-ctrl,
// nvhdcp_up-ctrl, nvdcutil-disp0/1): codes, sizes, directions, firmware ranges and the few known
// layouts, typed in here from Switchbrew's tables (not from abi/).
#include <cstdint>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

struct Row {
  uint32_t code;
  Dir dir;
  uint32_t size;
  const char* name;
  Firmware since = 0;       // first firmware with the code
  Firmware until = kNoEnd;  // first firmware without it
  static constexpr Firmware kNoEnd = 0xFFFFFFFF;
};

constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;

constexpr Row kSwitchbrewDispCtrl[] = {
    {0x80040212, O, 4, "NVDISP_CTRL_NUM_OUTPUTS"},
    {0xC0140213, IO, 20, "NVDISP_CTRL_GET_DISPLAY_PROPERTIES"},
    {0xC1100214, IO, 272, "NVDISP_CTRL_QUERY_EDID"},
    {0xC0080216, IO, 8, "NVDISP_CTRL_GET_EXT_HPD_IN_OUT_EVENTS", Fw(3, 0, 0)},
    {0xC0040216, IO, 4, "NVDISP_CTRL_GET_EXT_HPD_IN_EVENT", 0, Fw(3, 0, 0)},
    {0xC0040217, IO, 4, "NVDISP_CTRL_GET_EXT_HPD_OUT_EVENT", 0, Fw(3, 0, 0)},
    {0xC0100218, IO, 16, "NVDISP_CTRL_GET_VBLANK_HEAD0_EVENT"},
    {0xC0100219, IO, 16, "NVDISP_CTRL_GET_VBLANK_HEAD1_EVENT"},
    {0xC0040220, IO, 4, "NVDISP_CTRL_SUSPEND"},
    {0x80010224, O, 1, "NVDISP_CTRL_IS_DISPLAY_OLED", Fw(11, 0, 0)},
};

// FLIP: Switchbrew's direction column says In while its code is read/write; the code wins.
constexpr Row kSwitchbrewDisp[] = {
    {0x40040201, I, 4, "NVDISP_GET_WINDOW"},
    {0x40040202, I, 4, "NVDISP_PUT_WINDOW"},
    {0xC4C80203, IO, 1224, "NVDISP_FLIP"},
    {0x80380204, O, 56, "NVDISP_GET_MODE"},
    {0x40380205, I, 56, "NVDISP_SET_MODE"},
    {0x430C0206, I, 780, "NVDISP_SET_LUT"},
    {0x40010207, I, 1, "NVDISP_CONFIG_CRC"},
    {0x80040208, O, 4, "NVDISP_GET_CRC"},
    {0x80040209, O, 4, "NVDISP_GET_HEAD_STATUS"},
    {0xC038020A, IO, 56, "NVDISP_VALIDATE_MODE"},
    {0x4018020B, I, 24, "NVDISP_SET_CSC"},
    {0xC004020C, IO, 4, "NVDISP_GET_VBLANK_SYNCPT"},
    {0x8040020D, O, 64, "NVDISP_GET_UNDERFLOWS"},
    {0xC99A020E, IO, 2458, "NVDISP_SET_CMU"},
    {0xC004020F, IO, 4, "NVDISP_DPMS"},
    {0x80600210, O, 96, "NVDISP_GET_AVI_INFOFRAME"},
    {0x40600211, I, 96, "NVDISP_SET_AVI_INFOFRAME"},
    {0xEBFC0215, IO, 11260, "NVDISP_GET_MODE_DB"},
    {0xC003021A, IO, 3, "NVDISP_PANEL_GET_VENDOR_ID"},
    {0x803C021B, O, 60, "NVDISP_GET_MODE2"},
    {0x403C021C, I, 60, "NVDISP_SET_MODE2"},
    {0xC03C021D, IO, 60, "NVDISP_VALIDATE_MODE2"},
    {0xEF20021E, IO, 12064, "NVDISP_GET_MODE_DB2"},
    {0xC004021F, IO, 4, "NVDISP_GET_WINMASK"},
    {0x80080221, O, 8, "NVDISP_GET_BACKLIGHT_RANGE", Fw(10, 0, 0)},
    {0x40040222, I, 4, "NVDISP_SET_BACKLIGHT_RANGE_MAX", Fw(10, 0, 0)},
    {0x40040223, I, 4, "NVDISP_SET_BACKLIGHT_RANGE_MIN", Fw(11, 0, 0)},
    {0x401C0225, I, 28, "NVDISP_SEND_PANEL_MSG", Fw(11, 0, 0)},
    {0xC01C0226, IO, 28, "NVDISP_GET_PANEL_DATA", Fw(11, 0, 0)},
};

constexpr Row kSwitchbrewCec[] = {
    {0x40010301, I, 1, "NVCEC_CTRL_ENABLE"},
    {0x804C0302, O, 76, "NVCEC_CTRL_GET_PADDR"},
    {0x40040303, I, 4, "NVCEC_CTRL_SET_LADDR"},
    {0xC04C0304, IO, 76, "NVCEC_CTRL_WRITE"},
    {0xC04C0305, IO, 76, "NVCEC_CTRL_READ"},
    {0x804C0306, O, 76, "NVCEC_CTRL_GET_CONNECTION_STATUS"},
    {0x804C0307, O, 76, "NVCEC_CTRL_GET_WRITE_STATUS"},
};

constexpr Row kSwitchbrewHdcp[] = {
    {0xC4880401, IO, 1160, "NVHDCP_READ_STATUS"},
    {0xC4880402, IO, 1160, "NVHDCP_READ_M"},
    {0x40010403, I, 1, "NVHDCP_ENABLE"},
    {0xC0080404, IO, 8, "NVHDCP_CTRL_STATE_TRANSIT_EVENT_DATA"},
    {0xC0010405, IO, 1, "NVHDCP_CTRL_STATE_CB"},
};

// VIRTUAL_EDID_SET_DATA: Switchbrew's size column says 1056, its code encodes 516; the code wins.
constexpr Row kSwitchbrewDcutil[] = {
    {0x40010501, I, 1, "NVDCUTIL_ENABLE_CRC"},
    {0x40010502, I, 1, "NVDCUTIL_VIRTUAL_EDID_ENABLE"},
    {0x42040503, I, 516, "NVDCUTIL_VIRTUAL_EDID_SET_DATA"},
    {0x803C0504, O, 60, "NVDCUTIL_GET_MODE"},
    {0x40010505, I, 1, "NVDCUTIL_BEGIN_TELEMETRY_TEST"},
    {0x400C0506, I, 12, "NVDCUTIL_DSI_PACKET_TEST_SHORT_WRITE"},
    {0x40F80507, I, 248, "NVDCUTIL_DSI_PACKET_TEST_LONG_WRITE"},
    {0xC0F40508, IO, 244, "NVDCUTIL_DSI_PACKET_TEST_READ"},
    {0x40010509, I, 1, "NVDCUTIL_DP_ELECTRIC_TEST_EN", Fw(10, 0, 0)},
    {0xC020050A, IO, 32, "NVDCUTIL_DP_ELECTRIC_TEST_SETTINGS", Fw(10, 0, 0)},
    {0x8070050B, O, 112, "NVDCUTIL_DP_CONF_READ", Fw(11, 0, 0)},
};

const Field* FieldNamed(const IoctlDesc& d, std::string_view name) {
  for (const Field& f : d.fields)
    if (f.name == name) return &f;
  return nullptr;
}

void ExpectTable(DeviceId id, std::span<const Row> rows) {
  const DeviceDesc& dev = Device(id);
  EXPECT_EQ(dev.ioctls.size(), rows.size()) << dev.path;
  for (const Row& row : rows) {
    Firmware in_range = row.until != Row::kNoEnd ? row.until - 1 : kLatestFirmware;
    const IoctlDesc* d = FindIoctl(dev, row.code, in_range);
    ASSERT_NE(d, nullptr) << dev.path << " " << row.name;
    EXPECT_EQ(d->name, row.name);
    EXPECT_EQ(d->code, row.code) << row.name;
    EXPECT_EQ(d->size(), row.size) << row.name;
    EXPECT_EQ(d->dir(), row.dir) << row.name;
    EXPECT_EQ(d->fw.min, row.since) << row.name;
    EXPECT_EQ(d->fw.end, row.until) << row.name;
    EXPECT_FALSE(d->variable()) << row.name;
    // None of these ioctls has a fixed answer in Switchbrew.
    EXPECT_EQ(d->flags & kFixedAnswer, 0u) << row.name;
    if (row.since != 0) {
      EXPECT_EQ(FindIoctl(dev, row.code, row.since - 1), nullptr) << row.name;
    }
    if (row.until != Row::kNoEnd) {
      EXPECT_EQ(FindIoctl(dev, row.code, row.until), nullptr) << row.name;
    }
  }
}

TEST(CatalogueDisplay, NvdispCtrlMatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvdispCtrl, kSwitchbrewDispCtrl);
}
TEST(CatalogueDisplay, NvdispDisp0MatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvdispDisp0, kSwitchbrewDisp);
}
TEST(CatalogueDisplay, NvdispDisp1MatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvdispDisp1, kSwitchbrewDisp);
}
TEST(CatalogueDisplay, NvcecCtrlMatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvcecCtrl, kSwitchbrewCec);
}
TEST(CatalogueDisplay, NvhdcpUpCtrlMatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvhdcpUpCtrl, kSwitchbrewHdcp);
}
TEST(CatalogueDisplay, NvdcutilDisp0MatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvdcutilDisp0, kSwitchbrewDcutil);
}
TEST(CatalogueDisplay, NvdcutilDisp1MatchesSwitchbrew) {
  ExpectTable(DeviceId::kNvdcutilDisp1, kSwitchbrewDcutil);
}

TEST(CatalogueDisplay, ExtHpdEventsSplitBefore300) {
  const DeviceDesc& dev = Device(DeviceId::kNvdispCtrl);
  for (Firmware old_fw : {Fw(1, 0, 0), Fw(2, 3, 0)}) {
    const IoctlDesc* in = FindIoctl(dev, 0xC0040216, old_fw);
    const IoctlDesc* out = FindIoctl(dev, 0xC0040217, old_fw);
    ASSERT_NE(in, nullptr);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(in->name, "NVDISP_CTRL_GET_EXT_HPD_IN_EVENT");
    EXPECT_EQ(out->name, "NVDISP_CTRL_GET_EXT_HPD_OUT_EVENT");
    EXPECT_EQ(FindIoctl(dev, 0xC0080216, old_fw), nullptr);
  }
  for (Firmware new_fw : {Fw(3, 0, 0), Fw(11, 0, 0), kLatestFirmware}) {
    const IoctlDesc* both = FindIoctl(dev, 0xC0080216, new_fw);
    ASSERT_NE(both, nullptr);
    EXPECT_EQ(both->name, "NVDISP_CTRL_GET_EXT_HPD_IN_OUT_EVENTS");
    EXPECT_EQ(both->size(), 8u);
    EXPECT_EQ(FindIoctl(dev, 0xC0040216, new_fw), nullptr);
    EXPECT_EQ(FindIoctl(dev, 0xC0040217, new_fw), nullptr);
  }
}

TEST(CatalogueDisplay, NewerIoctlsAppearAtTheirFirmware) {
  const DeviceDesc& ctrl = Device(DeviceId::kNvdispCtrl);
  EXPECT_EQ(FindIoctl(ctrl, 0x80010224, Fw(10, 2, 0)), nullptr);
  ASSERT_NE(FindIoctl(ctrl, 0x80010224, Fw(11, 0, 0)), nullptr);

  const DeviceDesc& disp = Device(DeviceId::kNvdispDisp0);
  EXPECT_EQ(FindIoctl(disp, 0x80080221, Fw(9, 2, 0)), nullptr);
  EXPECT_NE(FindIoctl(disp, 0x80080221, Fw(10, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(disp, 0x40040222, Fw(10, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(disp, 0x40040223, Fw(10, 2, 0)), nullptr);
  EXPECT_NE(FindIoctl(disp, 0x40040223, Fw(11, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(disp, 0x401C0225, Fw(10, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(disp, 0xC01C0226, Fw(10, 0, 0)), nullptr);

  const DeviceDesc& dcutil = Device(DeviceId::kNvdcutilDisp1);
  EXPECT_EQ(FindIoctl(dcutil, 0x40010509, Fw(9, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(dcutil, 0x40010509, Fw(10, 0, 0)), nullptr);
  EXPECT_EQ(FindIoctl(dcutil, 0x8070050B, Fw(10, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(dcutil, 0x8070050B, Fw(11, 0, 0)), nullptr);
  // Old tables still have the always-present ioctls.
  EXPECT_NE(FindIoctl(dcutil, 0x40010501, Fw(1, 0, 0)), nullptr);
  EXPECT_NE(FindIoctl(disp, 0xC4C80203, Fw(1, 0, 0)), nullptr);
}

// Switchbrew's 13-word mode struct, with the direction of each ioctl.
TEST(CatalogueDisplay, ModeLayouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvdispDisp0);
  struct Want {
    const char* name;
    uint16_t offset;
  };
  constexpr Want kMode[] = {{"hActive", 0},     {"vActive", 4},      {"hSyncWidth", 8},
                            {"vSyncWidth", 12}, {"hFrontPorch", 16}, {"vFrontPorch", 20},
                            {"hBackPorch", 24}, {"vBackPorch", 28},  {"hRefToSync", 32},
                            {"vRefToSync", 36}, {"pclkKHz", 40},     {"bitsPerPixel", 44},
                            {"vmode", 48}};
  struct Ioctl {
    uint32_t code;
    Dir dir;
  };
  for (Ioctl io : {Ioctl{0x80380204, O}, Ioctl{0x40380205, I}, Ioctl{0xC038020A, IO}}) {
    const IoctlDesc* d = FindIoctl(dev, io.code);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->flags & kOpaque, 0u) << d->name;
    for (const Want& w : kMode) {
      const Field* f = FieldNamed(*d, w.name);
      ASSERT_NE(f, nullptr) << d->name << " " << w.name;
      EXPECT_EQ(f->offset, w.offset) << d->name << " " << w.name;
      EXPECT_EQ(f->type, FieldType::kU32) << w.name;
      EXPECT_EQ(f->count, 1) << w.name;
      EXPECT_EQ(f->dir, io.dir) << d->name << " " << w.name;
    }
  }
  EXPECT_TRUE(FindIoctl(dev, 0x80380204)->pure());
  EXPECT_FALSE(FindIoctl(dev, 0x40380205)->pure());
}

TEST(CatalogueDisplay, BacklightLayouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvdispDisp1);
  const IoctlDesc* range = FindIoctl(dev, 0x80080221);
  ASSERT_NE(range, nullptr);
  ASSERT_EQ(range->fields.size(), 2u);
  EXPECT_EQ(range->fields[0].name, "min");
  EXPECT_EQ(range->fields[0].offset, 0);
  EXPECT_EQ(range->fields[0].dir, O);
  EXPECT_EQ(range->fields[1].name, "max");
  EXPECT_EQ(range->fields[1].offset, 4);
  EXPECT_EQ(range->fields[1].dir, O);
  EXPECT_TRUE(range->pure());

  const IoctlDesc* max = FindIoctl(dev, 0x40040222);
  ASSERT_NE(max, nullptr);
  ASSERT_EQ(max->fields.size(), 1u);
  EXPECT_EQ(max->fields[0].name, "max");
  EXPECT_EQ(max->fields[0].type, FieldType::kU32);
  EXPECT_EQ(max->fields[0].dir, I);

  const IoctlDesc* min = FindIoctl(dev, 0x40040223);
  ASSERT_NE(min, nullptr);
  ASSERT_EQ(min->fields.size(), 1u);
  EXPECT_EQ(min->fields[0].name, "min");
  EXPECT_EQ(min->fields[0].dir, I);
}

TEST(CatalogueDisplay, PanelMessageLayouts) {
  const DeviceDesc& dev = Device(DeviceId::kNvdispDisp0);
  struct Ioctl {
    uint32_t code;
    Dir msg_dir;
  };
  for (Ioctl io : {Ioctl{0x401C0225, I}, Ioctl{0xC01C0226, O}}) {
    const IoctlDesc* d = FindIoctl(dev, io.code);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->flags & kOpaque, 0u);
    const Field* cmd = FieldNamed(*d, "cmd");
    const Field* addr = FieldNamed(*d, "addr");
    const Field* size = FieldNamed(*d, "size");
    const Field* msg = FieldNamed(*d, "msg");
    ASSERT_TRUE(cmd && addr && size && msg) << d->name;
    EXPECT_EQ(cmd->offset, 0);
    EXPECT_EQ(addr->offset, 4);
    EXPECT_EQ(size->offset, 8);
    EXPECT_EQ(msg->offset, 12);
    EXPECT_EQ(msg->type, FieldType::kU32);
    EXPECT_EQ(msg->count, 4);
    EXPECT_EQ(cmd->dir, I);
    EXPECT_EQ(addr->dir, I);
    EXPECT_EQ(size->dir, I);
    EXPECT_EQ(msg->dir, io.msg_dir) << d->name;
  }
}

// Ioctls Switchbrew names without a struct carry one opaque byte array of the code's size.
// FLIP as L4T's tegra_dc_ext_flip lays it out in its 64-bit form, at the start of the 1224 bytes:
// three 136-byte windows, the post-fence (written by the driver), the rest reserved.
TEST(CatalogueDisplay, FlipIsL4TsFlipInItsFirstBytes) {
  const IoctlDesc* d = FindIoctl(Device(DeviceId::kNvdispDisp0), 0xC4C80203);
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->fields.size(), 4u);
  EXPECT_EQ(d->fields[0].name, "win");
  EXPECT_EQ(d->fields[0].count, 3);
  ASSERT_NE(d->fields[0].sub, nullptr);
  EXPECT_EQ(d->fields[0].sub->size, 136u);
  EXPECT_EQ(d->fields[1].name, "post_syncpt_id");
  EXPECT_EQ(d->fields[1].offset, 408);
  EXPECT_EQ(d->fields[1].dir, Dir::kOut);
  EXPECT_EQ(d->fields[2].offset, 412);
  EXPECT_EQ(d->fields[3].extent(), 1224u);
  auto field = [&](std::string_view name) -> const Field* {
    for (const Field& f : d->fields[0].sub->fields)
      if (f.name == name) return &f;
    return nullptr;
  };
  ASSERT_NE(field("buff_id"), nullptr);
  EXPECT_EQ(field("buff_id")->offset, 4);
  ASSERT_NE(field("pre_syncpt_id"), nullptr);
  EXPECT_EQ(field("pre_syncpt_id")->offset, 96);  // after the two 64-bit timestamp words at 80
  ASSERT_NE(field("block_height_log2"), nullptr);
  EXPECT_EQ(field("block_height_log2")->offset, 117);
}

TEST(CatalogueDisplay, UndescribedIoctlsAreOpaque) {
  struct Want {
    DeviceId dev;
    uint32_t code;
    uint16_t bytes;
    Dir dir;
  };
  constexpr Want kWant[] = {
      {DeviceId::kNvdispCtrl, 0xC1100214, 272, IO},
      {DeviceId::kNvdispCtrl, 0x80010224, 1, O},
      {DeviceId::kNvdispDisp0, 0xEF20021E, 12064, IO},
      {DeviceId::kNvdispDisp1, 0x430C0206, 780, I},
      {DeviceId::kNvcecCtrl, 0xC04C0304, 76, IO},
      {DeviceId::kNvhdcpUpCtrl, 0xC4880401, 1160, IO},
      {DeviceId::kNvdcutilDisp0, 0x42040503, 516, I},
      {DeviceId::kNvdcutilDisp0, 0x8070050B, 112, O},
  };
  for (const Want& w : kWant) {
    const IoctlDesc* d = FindIoctl(Device(w.dev), w.code);
    ASSERT_NE(d, nullptr) << std::hex << w.code;
    EXPECT_NE(d->flags & kOpaque, 0u) << d->name;
    ASSERT_EQ(d->fields.size(), 1u) << d->name;
    EXPECT_EQ(d->fields[0].name, "data");
    EXPECT_EQ(d->fields[0].offset, 0);
    EXPECT_EQ(d->fields[0].type, FieldType::kU8);
    EXPECT_EQ(d->fields[0].count, w.bytes) << d->name;
    EXPECT_EQ(d->fields[0].dir, w.dir) << d->name;
  }
}

TEST(CatalogueDisplay, GettersArePureAndSettersAreNot) {
  struct Want {
    DeviceId dev;
    uint32_t code;
    bool pure;
  };
  constexpr Want kWant[] = {
      {DeviceId::kNvdispCtrl, 0x80040212, true},     {DeviceId::kNvdispCtrl, 0xC1100214, true},
      {DeviceId::kNvdispCtrl, 0xC0040220, false},    {DeviceId::kNvdispDisp0, 0x80040208, true},
      {DeviceId::kNvdispDisp0, 0xC038020A, true},    {DeviceId::kNvdispDisp0, 0x40600211, false},
      {DeviceId::kNvdispDisp0, 0xC004020F, false},   {DeviceId::kNvcecCtrl, 0x804C0302, true},
      {DeviceId::kNvcecCtrl, 0xC04C0304, false},     {DeviceId::kNvhdcpUpCtrl, 0xC4880402, true},
      {DeviceId::kNvhdcpUpCtrl, 0x40010403, false},  {DeviceId::kNvdcutilDisp0, 0x803C0504, true},
      {DeviceId::kNvdcutilDisp0, 0x42040503, false},
  };
  for (const Want& w : kWant) {
    const IoctlDesc* d = FindIoctl(Device(w.dev), w.code);
    ASSERT_NE(d, nullptr) << std::hex << w.code;
    EXPECT_EQ(d->pure(), w.pure) << d->name;
    EXPECT_FALSE(d->may_block()) << d->name;
  }
}

TEST(CatalogueDisplay, WrongSizeOrUnknownCodesDoNotResolve) {
  // Same nr and magic as GET_MODE but a different size: not Switchbrew's code.
  EXPECT_EQ(FindIoctl(Device(DeviceId::kNvdispDisp0), 0x80340204), nullptr);
  // Switchbrew's printed size for VIRTUAL_EDID_SET_DATA (1056) does not select it.
  EXPECT_EQ(FindIoctl(Device(DeviceId::kNvdcutilDisp0), 0x44200503), nullptr);
  // A display code on the wrong node.
  EXPECT_EQ(FindIoctl(Device(DeviceId::kNvcecCtrl), 0x80040212), nullptr);
  EXPECT_EQ(FindIoctl(Device(DeviceId::kNvdispCtrl), 0x0000021F), nullptr);
}

}  // namespace
}  // namespace nvsentry::abi
