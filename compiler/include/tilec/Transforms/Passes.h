#ifndef TILEC_TRANSFORMS_PASSES_H
#define TILEC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "tilec/Transforms/AtomicsStrategy.h"

#include <memory>

namespace tilec {

#define GEN_PASS_DECL
#include "tilec/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tilec/Transforms/Passes.h.inc"

} // namespace tilec

#endif
