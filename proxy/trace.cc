#include "proxy/trace.h"
