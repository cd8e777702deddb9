// The guest's live budgets live with the simulated GPU that charges most of them
// (hostshim/budget.h); the proxy charges open_fds and reads them for logs and --learn.
#pragma once

#include "hostshim/budget.h"

namespace nvsentry::proxy {

using hostshim::BudgetAccount;
using hostshim::BudgetKind;
using hostshim::BudgetName;
using hostshim::kBudgetKinds;

}  // namespace nvsentry::proxy
