#include "abi/devices/nvsched_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvsched_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut;
constexpr NvError kOk = NvError::kSuccess;

constexpr Field kApplicationF[] = {
    {"application_id", 0, kU64, 1, I}, {"priority", 8, kU64, 1, I}, {"timeslice", 16, kU64, 1, I}};
constexpr Field kApplicationIdF[] = {{"application_id", 0, kU64, 1, I}};
constexpr Field kGetIdF[] = {{"id", 0, kU64, 1, O}};
constexpr Field kAddRunlistF[] = {{"runlist_id", 0, kU64, 1, O}};
constexpr Field kUpdateRunlistF[] = {
    {"runlist_id", 0, kU64, 1, I}, {"priority", 8, kU64, 1, I}, {"timeslice", 16, kU64, 1, I}};
constexpr Field kRunlistLinkF[] = {{"runlist_id", 0, kU64, 1, I},
                                   {"application_id", 8, kU64, 1, I}};
constexpr Field kRunlistIdF[] = {{"runlist_id", 0, kU64, 1, I}};
constexpr Field kHasOverrunF[] = {{"has_overrun", 0, kU8, 1, O}};
constexpr Field kOverrunV1F[] = {{"runlist_id", 0, kU64, 1, O}, {"debt", 8, kU64, 1, O}};
constexpr Field kOverrunF[] = {{"runlist_id", 0, kU64, 1, O},
                               {"debt", 8, kU64, 1, O},
                               {"unk0", 16, kU64, 1, O},
                               {"unk1", 24, kU64, 1, O}};
constexpr Field kFlipFenceF[] = {
    {"fence_id", 0, kU32, 1, I}, {"fence_value", 4, kU32, 1, I}, {"swap_interval", 8, kU32, 1, I}};
// Layouts Switchbrew does not give.
constexpr Field kOpaqueIn16[] = {{"data", 0, kU8, 16, I}};
constexpr Field kOpaqueIn1[] = {{"data", 0, kU8, 1, I}};

constexpr FwRange kBefore300{0, Fw(3, 0, 0)};
constexpr FwRange kFrom300{Fw(3, 0, 0)};

constexpr IoctlDesc kIoctls[] = {
    {kEnable, "NVSCHED_CTRL_ENABLE", {}, 0, {}, 0, {}, kOk, "Turns the scheduler on."},
    {kDisable, "NVSCHED_CTRL_DISABLE", {}, 0, {}, 0, {}, kOk, "Turns the scheduler off."},
    {kAddApplication,
     "NVSCHED_CTRL_ADD_APPLICATION",
     kApplicationF,
     0,
     {},
     0,
     {},
     kOk,
     "Registers an application with its priority and timeslice."},
    {kUpdateApplication,
     "NVSCHED_CTRL_UPDATE_APPLICATION",
     kApplicationF,
     0,
     {},
     0,
     {},
     kOk,
     "Changes a registered application's priority and timeslice."},
    {kRemoveApplication,
     "NVSCHED_CTRL_REMOVE_APPLICATION",
     kApplicationIdF,
     0,
     {},
     0,
     {},
     kOk,
     "Drops an application from the scheduler."},
    {kGetId,
     "NVSCHED_CTRL_GET_ID",
     kGetIdF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Reports the id of the object scheduled last."},
    {kAddRunlist,
     "NVSCHED_CTRL_ADD_RUNLIST",
     kAddRunlistF,
     0,
     {},
     0,
     {},
     kOk,
     "Makes a new runlist; returns its id."},
    {kUpdateRunlist,
     "NVSCHED_CTRL_UPDATE_RUNLIST",
     kUpdateRunlistF,
     0,
     {},
     0,
     {},
     kOk,
     "Changes a runlist's priority and timeslice."},
    {kLinkRunlist,
     "NVSCHED_CTRL_LINK_RUNLIST",
     kRunlistLinkF,
     0,
     {},
     0,
     {},
     kOk,
     "Attaches a runlist to an application."},
    {kUnlinkRunlist,
     "NVSCHED_CTRL_UNLINK_RUNLIST",
     kRunlistLinkF,
     0,
     {},
     0,
     {},
     kOk,
     "Detaches a runlist from an application."},
    {kRemoveRunlist,
     "NVSCHED_CTRL_REMOVE_RUNLIST",
     kRunlistIdF,
     0,
     {},
     0,
     {},
     kOk,
     "Deletes a runlist."},
    {kHasOverrunEvent,
     "NVSCHED_CTRL_HAS_OVERRUN_EVENT",
     kHasOverrunF,
     kPure,
     {},
     0,
     {},
     kOk,
     "Reports (as a byte) whether an overrun event is pending."},
    {kGetNextOverrunEventV1,
     "NVSCHED_CTRL_GET_NEXT_OVERRUN_EVENT",
     kOverrunV1F,
     0,
     {},
     0,
     kBefore300,
     kOk,
     "Takes the next overrun event: runlist id and debt (pre-3.0.0 layout)."},
    {kGetNextOverrunEvent,
     "NVSCHED_CTRL_GET_NEXT_OVERRUN_EVENT",
     kOverrunF,
     0,
     {},
     0,
     kFrom300,
     kOk,
     "Takes the next overrun event: runlist id, debt and two unknown words."},
    {kPutConductorFlipFence,
     "NVSCHED_CTRL_PUT_CONDUCTOR_FLIP_FENCE",
     kFlipFenceF,
     0,
     {},
     0,
     {},
     kOk,
     "Installs a fence-driven swap event (fence id, value, swap interval)."},
    {kDetachApplication,
     "NVSCHED_CTRL_DETACH_APPLICATION",
     kApplicationIdF,
     0,
     {},
     0,
     {},
     kOk,
     "Puts an application into the detached state."},
    {kSetApplicationMaxDebt,
     "NVSCHED_CTRL_SET_APPLICATION_MAX_DEBT",
     kOpaqueIn16,
     kOpaque,
     {},
     0,
     {},
     kOk,
     "Sets an application's debt limit (layout unknown)."},
    {kSetRunlistMaxDebt,
     "NVSCHED_CTRL_SET_RUNLIST_MAX_DEBT",
     kOpaqueIn16,
     kOpaque,
     {},
     0,
     {},
     kOk,
     "Sets a runlist's debt limit (layout unknown)."},
    {kOverrunEventsEnable,
     "NVSCHED_CTRL_OVERRUN_EVENTS_ENABLE",
     kOpaqueIn1,
     kOpaque,
     {},
     0,
     {},
     kOk,
     "Switches overrun event reporting on or off (layout unknown)."},
};
static_assert(TableIsSound(kIoctls), "nvsched-ctrl layouts disagree with their codes");
static_assert(sizeof(Application) == IocSize(kAddApplication));
static_assert(sizeof(Application) == IocSize(kUpdateApplication));
static_assert(sizeof(ApplicationId) == IocSize(kRemoveApplication));
static_assert(sizeof(ApplicationId) == IocSize(kDetachApplication));
static_assert(sizeof(GetId) == IocSize(kGetId));
static_assert(sizeof(RunlistId) == IocSize(kAddRunlist));
static_assert(sizeof(RunlistId) == IocSize(kRemoveRunlist));
static_assert(sizeof(UpdateRunlist) == IocSize(kUpdateRunlist));
static_assert(sizeof(RunlistLink) == IocSize(kLinkRunlist));
static_assert(sizeof(RunlistLink) == IocSize(kUnlinkRunlist));
static_assert(sizeof(HasOverrunEvent) == IocSize(kHasOverrunEvent));
static_assert(sizeof(OverrunEventV1) == IocSize(kGetNextOverrunEventV1));
static_assert(sizeof(OverrunEvent) == IocSize(kGetNextOverrunEvent));
static_assert(sizeof(PutConductorFlipFence) == IocSize(kPutConductorFlipFence));

NVS_CHECK_MEMBER(kApplicationF, Application, application_id);
NVS_CHECK_MEMBER(kApplicationF, Application, priority);
NVS_CHECK_MEMBER(kApplicationF, Application, timeslice);
NVS_CHECK_MEMBER(kApplicationF, Application, application_id);
NVS_CHECK_MEMBER(kApplicationF, Application, priority);
NVS_CHECK_MEMBER(kApplicationF, Application, timeslice);
NVS_CHECK_MEMBER(kApplicationIdF, ApplicationId, application_id);
NVS_CHECK_MEMBER(kApplicationIdF, ApplicationId, application_id);
NVS_CHECK_MEMBER(kGetIdF, GetId, id);
NVS_CHECK_MEMBER(kAddRunlistF, RunlistId, runlist_id);
NVS_CHECK_MEMBER(kRunlistIdF, RunlistId, runlist_id);
NVS_CHECK_MEMBER(kUpdateRunlistF, UpdateRunlist, runlist_id);
NVS_CHECK_MEMBER(kUpdateRunlistF, UpdateRunlist, priority);
NVS_CHECK_MEMBER(kUpdateRunlistF, UpdateRunlist, timeslice);
NVS_CHECK_MEMBER(kRunlistLinkF, RunlistLink, runlist_id);
NVS_CHECK_MEMBER(kRunlistLinkF, RunlistLink, application_id);
NVS_CHECK_MEMBER(kRunlistLinkF, RunlistLink, runlist_id);
NVS_CHECK_MEMBER(kRunlistLinkF, RunlistLink, application_id);
NVS_CHECK_MEMBER(kHasOverrunF, HasOverrunEvent, has_overrun);
NVS_CHECK_MEMBER(kOverrunV1F, OverrunEventV1, runlist_id);
NVS_CHECK_MEMBER(kOverrunV1F, OverrunEventV1, debt);
NVS_CHECK_MEMBER(kOverrunF, OverrunEvent, runlist_id);
NVS_CHECK_MEMBER(kOverrunF, OverrunEvent, debt);
NVS_CHECK_MEMBER(kOverrunF, OverrunEvent, unk0);
NVS_CHECK_MEMBER(kOverrunF, OverrunEvent, unk1);
NVS_CHECK_MEMBER(kFlipFenceF, PutConductorFlipFence, fence_id);
NVS_CHECK_MEMBER(kFlipFenceF, PutConductorFlipFence, fence_value);
NVS_CHECK_MEMBER(kFlipFenceF, PutConductorFlipFence, swap_interval);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvsched_ctrl
