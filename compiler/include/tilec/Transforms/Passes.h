#ifndef TILEC_TRANSFORMS_PASSES_H
#define TILEC_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tilec {

#define GEN_PASS_DECL
#include "tilec/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tilec/Transforms/Passes.h.inc"

} // namespace tilec

#endif
