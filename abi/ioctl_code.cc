#include "abi/ioctl_code.h"

namespace nvsentry::abi {

const char* DirName(Dir d) {
  switch (d) {
    case Dir::kNone: return "none";
    case Dir::kIn: return "in";
    case Dir::kOut: return "out";
    case Dir::kInOut: return "inout";
  }
  return "?";
}

}  // namespace nvsentry::abi
