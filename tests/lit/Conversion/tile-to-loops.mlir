// tile-to-loops: kernels become @k_block (one block) and @k (the grid) on
// plain memrefs; whole-tile ops become loop nests.
// RUN: tile-opt %s -split-input-file -tile-to-loops | FileCheck %s
// A conversion: nothing of the tile dialect is left, not even the memory spaces of the memref types.
// RUN: tile-opt %s -split-input-file -tile-to-loops | FileCheck %s --check-prefix=NONE-LEFT
// NONE-LEFT-NOT: tile.

// CHECK-LABEL: func.func @copy_scale_block(
// CHECK-SAME:    %[[X:.*]]: memref<?x128xf32>, %[[Y:.*]]: memref<?x128xbf16>, %[[BX:.*]]: index)
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// Tiles are allocated per block and freed at the end.
// CHECK:       %[[T:.*]] = memref.alloc() : memref<64x128xf32>
// A copy from a region is a loop nest with a masked load (pad 0 outside).
// CHECK:       scf.for %[[I:.*]] =
// CHECK:         scf.for %[[J:.*]] =
// CHECK:           %[[ROW:.*]] = arith.addi %{{.*}}, %[[I]]
// CHECK:           memref.dim %[[X]]
// CHECK:           arith.cmpi ult
// CHECK:           scf.if %{{.*}} -> (f32) {
// CHECK:             memref.load %[[X]][%[[ROW]], %{{.*}}] : memref<?x128xf32>
// CHECK:           } else {
// CHECK:             arith.constant 0.000000e+00 : f32
// CHECK:           memref.store %{{.*}}, %[[T]][%[[I]], %[[J]]]
// The parallel loop is a loop nest over its extents.
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:           arith.mulf
// A copy into a bf16 region rounds and stores only inside the buffer.
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %[[Y]]
// CHECK:       memref.dealloc %[[T]]
// CHECK:       return
// The grid function computes the extents from the argument dims.
// CHECK-LABEL: func.func @copy_scale(
// CHECK:       %[[N:.*]] = memref.dim
// CHECK:       %[[E:.*]] = arith.ceildivsi %[[N]], %{{.*}}
// CHECK:       scf.for %[[B:.*]] = %{{.*}} to %[[E]]
// CHECK:         func.call @copy_scale_block(%{{.*}}, %{{.*}}, %[[B]])
// CHECK-NOT:   tile.kernel
tile.kernel @copy_scale(%X: memref<?x128xf32, #tile.space<global>>, %Y: memref<?x128xbf16, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%bx) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %row = arith.muli %bx, %c64 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %xr = tile.region %X[%row, %c0] [64, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  tile.copy %xr, %t : !tile.region<64x128xf32, global>, memref<64x128xf32, #tile.space<fragment>>
  tile.parallel (%i, %j) in [64, 128] {
    %v = memref.load %t[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %t[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
  }
  %yr = tile.region %Y[%row, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  tile.copy %t, %yr : memref<64x128xf32, #tile.space<fragment>>, !tile.region<64x128xbf16, global>
}

// -----

// gemm: a triple loop accumulating in f32 (iter_args), transposes swap the
// index order; `clear` starts from zero instead of C.
// CHECK-LABEL: func.func @mm_block(
// CHECK:       scf.for %[[I:.*]] =
// CHECK:         scf.for %[[J:.*]] =
// CHECK:           %[[C0:.*]] = memref.load %[[C:.*]][%[[I]], %[[J]]] : memref<16x8xf32>
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[C0]]) -> (f32)
// CHECK:             %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<16x32xbf16>
// CHECK:             arith.extf %[[A]]
// CHECK:             %[[B:.*]] = memref.load %{{.*}}[%[[J]], %[[K]]] : memref<8x32xbf16>
// CHECK:             arith.extf %[[B]]
// CHECK:             arith.mulf
// CHECK:             arith.addf %[[ACC]]
// CHECK:           memref.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
tile.kernel @mm(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %a = tile.alloc : memref<16x32xbf16, #tile.space<shared>>
  %bt = tile.alloc : memref<8x32xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<16x8xf32, #tile.space<fragment>>
  tile.gemm %a, %bt -> %c transpose_b : memref<16x32xbf16, #tile.space<shared>>, memref<8x32xbf16, #tile.space<shared>>, memref<16x8xf32, #tile.space<fragment>>
}

// -----

// reduce max with clear starts from -inf and combines with maximumf;
// atomic_add into a bf16 region is a masked read-add-round-write in f32.
// CHECK-LABEL: func.func @rowmax_block(
// CHECK:       %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       scf.for
// CHECK:         scf.for {{.*}} iter_args(%[[M:.*]] = %[[NINF]])
// CHECK:           arith.maximumf %[[M]]
// CHECK:       scf.for
// CHECK:         scf.if
// CHECK:           %[[OLD:.*]] = memref.load %{{.*}} : memref<?xbf16>
// CHECK:           %[[OLDF:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK:           %[[NEW:.*]] = arith.addf %[[OLDF]], %{{.*}} : f32
// CHECK:           arith.truncf %[[NEW]] : f32 to bf16
// CHECK:           memref.store
tile.kernel @rowmax(%O: memref<?xbf16, #tile.space<global>>) grid(%O[0]) ()[s0] -> (s0 ceildiv 16) threads(32) as (%b) {
  %c16 = arith.constant 16 : index
  %s = tile.alloc : memref<16x4xf32, #tile.space<fragment>>
  %m = tile.alloc : memref<16xf32, #tile.space<fragment>>
  tile.reduce max %s -> %m dim 1 clear : memref<16x4xf32, #tile.space<fragment>> -> memref<16xf32, #tile.space<fragment>>
  %off = arith.muli %b, %c16 : index
  %r = tile.region %O[%off] [16] : memref<?xbf16, #tile.space<global>> -> !tile.region<16xbf16, global>
  tile.atomic_add %m, %r : memref<16xf32, #tile.space<fragment>>, !tile.region<16xbf16, global>
}

// -----

// tile.discard on the CPU: NaN in every in-bounds element (a read after it cannot pass unseen).
// CHECK-LABEL: func.func @discard_block(
// CHECK:       %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:       scf.for
// CHECK:         scf.if
// CHECK:           memref.store %[[NAN]], %{{.*}} : memref<?xf32>
tile.kernel @discard(%P: memref<?xf32, #tile.space<global>>) grid(%P[0]) ()[s0] -> (s0 ceildiv 16) threads(32) as (%b) {
  %c16 = arith.constant 16 : index
  %off = arith.muli %b, %c16 : index
  %r = tile.region %P[%off] [16] : memref<?xf32, #tile.space<global>> -> !tile.region<16xf32, global>
  tile.discard %r : !tile.region<16xf32, global>
}

// -----

// A sum of bf16 accumulates in f32 from zero, then adds the target's old value (clear=false) and rounds once to bf16,
// as the GPU does (docs/language.md §9.4).
// CHECK-LABEL: func.func @rowsum16_block(
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:           %[[X:.*]] = memref.load %{{.*}} : memref<16x4xbf16>
// CHECK:           %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK:           %[[NEXT:.*]] = arith.addf %[[ACC]], %[[XF]] : f32
// CHECK:           scf.yield %[[NEXT]] : f32
// CHECK:         %[[OLD:.*]] = memref.load %{{.*}} : memref<16xbf16>
// CHECK:         %[[OLDF:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK:         %[[TOTAL:.*]] = arith.addf %[[OLDF]], %[[SUM]] : f32
// CHECK:         %[[ROUNDED:.*]] = arith.truncf %[[TOTAL]] : f32 to bf16
// CHECK:         memref.store %[[ROUNDED]], %{{.*}} : memref<16xbf16>
tile.kernel @rowsum16(%O: memref<?xbf16, #tile.space<global>>) grid(%O[0]) ()[s0] -> (s0 ceildiv 16) threads(32) as (%b) {
  %s = tile.alloc : memref<16x4xbf16, #tile.space<fragment>>
  %m = tile.alloc : memref<16xbf16, #tile.space<fragment>>
  tile.reduce sum %s -> %m dim 1 : memref<16x4xbf16, #tile.space<fragment>> -> memref<16xbf16, #tile.space<fragment>>
}
