#include "hostshim/sim/display/display_ctrl_devices.h"

#include <cstring>

#include "abi/devices/nvcec_ctrl.h"
#include "abi/devices/nvdcutil.h"
#include "abi/devices/nvdisp_ctrl.h"
#include "abi/devices/nvhdcp_up_ctrl.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
using abi::NvError;

namespace {

Result Zeros(Call& call) {
  std::memset(call.arg.data(), 0, call.arg.size());
  return Result::Done(NvError::kSuccess);
}
Result Ok() { return Result::Done(NvError::kSuccess); }
Result Err(NvError e) { return Result::Done(e); }

class NvdispCtrlDevice : public DeviceBackend {
 public:
  explicit NvdispCtrlDevice(Display& display) : display_(display) {}
  Result Ioctl(Call& call) override {
    namespace c = abi::nvdisp_ctrl;
    switch (call.desc.code) {
      case c::kNumOutputs: ArgAs<uint32_t>(call.arg) = 2; return Ok();
      case c::kGetDisplayProperties: {
        struct Properties {  // tegra_dc_ext_control_output_properties
          uint32_t handle, type, connected;
          int32_t associated_head;
          uint32_t head_mask;
        };
        static_assert(sizeof(Properties) == 20);
        auto& p = ArgAs<Properties>(call.arg);
        if (p.handle >= Display::kHeads) return Err(NvError::kBadParameter);
        constexpr uint32_t kDsi = 0, kHdmi = 3;  // tegra_dc_ext_control_output_type
        p.type = p.handle == 0 ? kDsi : kHdmi;
        p.connected = display_.head(p.handle).connected() ? 1 : 0;
        p.associated_head = static_cast<int32_t>(p.handle);
        p.head_mask = 1u << p.handle;
        return Ok();
      }
      case c::kQueryEdid: return Err(NvError::kDispEdidFailure);
      case c::kGetExtHpdInOutEvents:
      case c::kGetExtHpdInEventV1:
      case c::kGetExtHpdOutEventV1: return Zeros(call);
      case c::kGetVblankHead0Event:
      case c::kGetVblankHead1Event: {
        struct VblankEvent {  // tegra_dc_ext_control_event_vblank
          uint32_t handle, reserved;
          uint64_t timestamp_ns;
        };
        static_assert(sizeof(VblankEvent) == 16);
        const uint32_t head = call.desc.code == c::kGetVblankHead0Event ? 0 : 1;
        ArgAs<VblankEvent>(call.arg) = {
            head, 0, static_cast<uint64_t>(display_.head(head).last_vblank_ns())};
        return Ok();
      }
      case c::kSuspend: return Ok();
      case c::kIsDisplayOled: call.arg[0] = 0; return Ok();
      default: return Unimplemented(call);
    }
  }

 private:
  Display& display_;
};

class NvcecCtrlDevice : public DeviceBackend {
 public:
  Result Ioctl(Call& call) override {
    namespace c = abi::nvcec_ctrl;
    switch (call.desc.code) {
      case c::kEnable:
      case c::kSetLaddr: return Ok();
      case c::kGetPaddr:
      case c::kWrite:
      case c::kRead: return Err(NvError::kDispNotAttached);
      case c::kGetConnectionStatus:
      case c::kGetWriteStatus: return Zeros(call);
      default: return Unimplemented(call);
    }
  }
};

class NvhdcpUpCtrlDevice : public DeviceBackend {
 public:
  Result Ioctl(Call& call) override {
    namespace c = abi::nvhdcp_up_ctrl;
    switch (call.desc.code) {
      case c::kReadStatus:
      case c::kReadM: return Err(NvError::kDispNotAttached);
      case c::kEnable: return call.arg[0] == 0 ? Ok() : Err(NvError::kDispNotAttached);
      case c::kCtrlStateTransitEventData:
      case c::kCtrlStateCb: return Zeros(call);
      default: return Unimplemented(call);
    }
  }
};

class NvdcutilDevice : public DeviceBackend {
 public:
  explicit NvdcutilDevice(DisplayHead& head) : head_(head) {}
  Result Ioctl(Call& call) override {
    namespace c = abi::nvdcutil;
    switch (call.desc.code) {
      case c::kEnableCrc: head_.ConfigCrc(call.arg[0] != 0); return Ok();
      case c::kVirtualEdidEnable:
      case c::kVirtualEdidSetData:
      case c::kBeginTelemetryTest: return Ok();
      case c::kGetMode: {
        abi::nvdisp::Mode2 m = head_.CurrentMode2();
        std::memcpy(call.arg.data(), &m, std::min(sizeof m, call.arg.size()));
        return Ok();
      }
      case c::kDsiPacketTestShortWrite:
      case c::kDsiPacketTestLongWrite:
        return head_.connected() ? Ok() : Err(NvError::kNotSupported);
      case c::kDsiPacketTestRead:
        return head_.connected() ? Zeros(call) : Err(NvError::kNotSupported);
      case c::kDpElectricTestEn:
      case c::kDpElectricTestSettings:
      case c::kDpConfRead: return Err(NvError::kNotSupported);
      default: return Unimplemented(call);
    }
  }

 private:
  DisplayHead& head_;
};

}  // namespace

std::unique_ptr<DeviceBackend> OpenDisplayCtrlDevice(const abi::DeviceDesc& device,
                                                     Display& display) {
  switch (device.id) {
    case abi::DeviceId::kNvdispCtrl: return std::make_unique<NvdispCtrlDevice>(display);
    case abi::DeviceId::kNvcecCtrl: return std::make_unique<NvcecCtrlDevice>();
    case abi::DeviceId::kNvhdcpUpCtrl: return std::make_unique<NvhdcpUpCtrlDevice>();
    case abi::DeviceId::kNvdcutilDisp0: return std::make_unique<NvdcutilDevice>(display.head(0));
    case abi::DeviceId::kNvdcutilDisp1: return std::make_unique<NvdcutilDevice>(display.head(1));
    default: return nullptr;
  }
}

}  // namespace nvsentry::hostshim::sim
