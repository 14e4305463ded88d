// A tile.entry lowered to the runtime's launch-plan format
// (runtime/include/tilec/runtime/LaunchPlan.h): what a host executes with its
// own tensors, the workspaces hidden inside.
#ifndef TILEC_TARGET_PLAN_ENTRYTOPLAN_H
#define TILEC_TARGET_PLAN_ENTRYTOPLAN_H

#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/runtime/LaunchPlan.h"
#include "tilec/runtime/Module.h"

#include "llvm/Support/Error.h"

namespace tilec {

/// Lowers `entry`: tile.workspace -> AllocStep (bytes = product of the sizes
/// times the element size, zeroFill = zeroed), tile.launch -> LaunchStep
/// (function = the kernel's name, grid = its grid map over the launch
/// arguments' dims, block = its threads, dynamic shared memory = its
/// `tile.shared_bytes` if known, arguments as tensor / workspace pointers),
/// tile.free -> FreeStep. Index values become Exprs over `dim(arg, axis)`
/// (divsi becomes floordiv: sizes are never negative). `cubin` is the CUBIN
/// index every launch gets.
llvm::Expected<runtime::LaunchPlan> lowerEntryToPlan(tile::EntryOp entry,
                                                     int cubin = 0);

/// The entry's runtime signature: one parameter per argument, named by
/// `tile.arg_names`, with the memref's element type; each axis of
/// `tile.arg_shapes` that is a bare dim name (`seq`) becomes a named dim, a
/// constant a static one, anything else (`heads floordiv 2`) any extent.
/// Scalar arguments and element types the runtime lacks are errors.
llvm::Expected<runtime::Signature> lowerEntrySignature(tile::EntryOp entry);

/// The signature of a tile.entry or tile.kernel (type `type`), from its tile.arg_names, tile.arg_shapes and
/// tile.dim_names: static, named and derived dims (derived ones checked at launch).
llvm::Expected<runtime::Signature> lowerSignature(mlir::Operation *op,
                                                  mlir::FunctionType type);

/// Signature and plan together: what `tilec --emit=plan` prints
/// (runtime::printPlan) and a runtime Module loads.
llvm::Expected<runtime::EntrySpec> lowerEntry(tile::EntryOp entry,
                                              int cubin = 0);

/// Every tile.entry of `module`, in order (what a module file or a JIT host
/// loads).
llvm::Expected<std::vector<runtime::EntrySpec>>
lowerEntries(mlir::ModuleOp module, int cubin = 0);

} // namespace tilec

#endif
