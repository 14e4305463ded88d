#include "tilec/runtime/LaunchPlan.h"

namespace tilec::runtime {

int LaunchPlan::alloc(Expr bytes, bool zeroFill) {
  int id = workspaceCount_++;
  steps_.emplace_back(AllocStep{id, std::move(bytes), zeroFill});
  return id;
}

LaunchPlan &LaunchPlan::launch(LaunchStep step) {
  steps_.emplace_back(std::move(step));
  return *this;
}

LaunchPlan &LaunchPlan::free(int workspace) {
  steps_.emplace_back(FreeStep{workspace});
  return *this;
}

} // namespace tilec::runtime
