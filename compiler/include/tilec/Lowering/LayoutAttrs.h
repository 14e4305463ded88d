// Between the layout algebra (tilec/Lowering/Layout.h, plain C++) and the dialect's layout attributes
// (#tile.replicated, #tile.blocked, #tile.mma_c, #tile.mma_a, #tile.slice): tile-infer-layouts records each decision
// as an attribute, and the passes after it and the CUDA emitter read the layout back from it.
#ifndef TILEC_LOWERING_LAYOUTATTRS_H
#define TILEC_LOWERING_LAYOUTATTRS_H

#include "tilec/Lowering/Layout.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <string>

namespace tilec::layout {

/// The attribute describing a layout.
mlir::Attribute toAttr(mlir::MLIRContext *context, const FragmentLayout &layout);
/// The spec a layout attribute holds; nothing if `attr` is not one.
std::optional<LayoutSpec> specOf(mlir::Attribute attr);
/// The layout a layout attribute describes for a block of `threads` threads; nothing (and `error` set) if `attr` is
/// not a layout attribute or does not fit the block.
std::optional<FragmentLayout> fromAttr(mlir::Attribute attr, int64_t threads, std::string *error = nullptr);

/// The #tile.swizzle attribute of a shared tile's swizzle.
mlir::Attribute swizzleAttr(mlir::MLIRContext *context, const Swizzle &swizzle);
/// The kind of swizzle a #tile.swizzle attribute records; nothing if `attr` is not one.
std::optional<Swizzle::Kind> swizzleKindOf(mlir::Attribute attr);

} // namespace tilec::layout

#endif
