// The README's sample kernel stays valid and keeps its shape.
// RUN: tile-opt %tilec_src/examples/ir/softmax_rows.mlir -canonicalize -tile-shared-memory-budget | FileCheck %s
// CHECK-LABEL: tile.kernel @softmax_rows
// CHECK-SAME:  tile.shared_bytes = 0
// CHECK:       tile.reduce max
// CHECK:       tile.parallel
// CHECK:       tile.reduce sum
// CHECK:       tile.copy
