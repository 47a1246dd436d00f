// libFuzzer's start-up hook, shared by every target: the readers log what
// they skip, and at millions of inputs that is noise and most of the time.
#include "spdlog/spdlog.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}
