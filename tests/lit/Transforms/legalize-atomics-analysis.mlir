// tile-legalize-atomics: the conflict analysis, one case per outcome, with the
// exact remark (strategy=split, so every remark says why split was or was not
// possible).
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=split" -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=split max-split=2" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=SMALL

// Injective: row blocks of 64 at stride 64, heads by h: one block per element.
tile.kernel @injective(%X: memref<?x?x64xf32, #tile.space<global>>, %Y: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["h", "m"]} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %r = tile.region %Y[%row, %h, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'Y' (bf16): each element is updated by one block only; plain read-modify-write in bf16}}
  tile.atomic_add %acc, %r : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// CHECK-LABEL: tile.kernel @injective_main(
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} exclusive : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK-LABEL: tile.entry @injective(
// CHECK-NEXT:    tile.launch @injective_main(%X, %Y)
// CHECK-NEXT:  }

// -----

// Constant split: `h / 4` maps 4 heads onto one row of Y.
tile.kernel @constant_split(%X: memref<?x?x64xf32, #tile.space<global>>, %Y: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["h", "m"]} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %g = arith.divsi %h, %c4 : index
  %r = tile.region %Y[%row, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'Y' (bf16): blocks collide over block index h in 4 ways (split index h mod 4); split: each of the 4 splits updates its own slice of a zeroed f32 partial buffer with plain stores (each element is written once), and @constant_split_Y_sum adds the slices into 'Y' in a fixed order}}
  tile.atomic_add %acc, %r : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// CHECK-LABEL: tile.kernel @constant_split_Y_sum(
// CHECK-LABEL: tile.kernel @constant_split_main(
// CHECK-SAME:    %Y: memref<4x?x?x64xf32, #tile.space<global>>
// CHECK:         %[[S:.*]] = arith.remsi %h, %c4
// CHECK:         %[[R:.*]] = tile.region %Y[%[[S]], %{{.*}}, %{{.*}}, %{{.*}}] [1, 64, 1, 64] : memref<4x?x?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
// CHECK:         tile.atomic_add %{{.*}}, %[[R]] exclusive
// CHECK-LABEL: tile.entry @constant_split(
// CHECK:         tile.workspace [%{{.*}}, %{{.*}}] zeroed : memref<4x?x?x64xf32, #tile.space<global>>

// -----

// Dynamic: the row block m is not in the destination index (dQ's pattern).
tile.kernel @dynamic(%X: memref<?x?x64xf32, #tile.space<global>>, %Y: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["h", "m"], tile.dim_names = ["heads", "seq"]} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %X, %c0 : memref<?x?x64xf32, #tile.space<global>>
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  tile.pipelined %i = %c0 to %n stages 2 {
    %row = arith.muli %i, %c64 : index
    %r = tile.region %Y[%row, %h, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    // expected-remark @+1 {{atomic_add into 'Y' (bf16): blocks collide over block index m, whose extent (seq ceildiv 64) is not a compile-time constant; split is not possible, so fp32: f32 atomics into an f32 workspace (@dynamic_Y_to_f32 before, @dynamic_Y_from_f32 after)}}
    tile.atomic_add %acc, %r : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
}

// CHECK-LABEL: tile.kernel @dynamic_Y_to_f32(
// CHECK-LABEL: tile.kernel @dynamic_Y_from_f32(
// CHECK-LABEL: tile.kernel @dynamic_main(
// CHECK-SAME:    %Y: memref<?x?x64xf32, #tile.space<global>>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
// CHECK-LABEL: tile.entry @dynamic(

// -----

// Too large: 16 heads share a row, more than max-split.
tile.kernel @too_large(%X: memref<?x?x64xf32, #tile.space<global>>, %Y: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["h", "m"]} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %g = arith.divsi %h, %c16 : index
  %r = tile.region %Y[%row, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'Y' (bf16): blocks collide over block index h in 16 ways (split index h mod 16): 16 splits, more than max-split=8; split is not possible, so fp32: f32 atomics into an f32 workspace (@too_large_Y_to_f32 before, @too_large_Y_from_f32 after)}}
  tile.atomic_add %acc, %r : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// CHECK-LABEL: tile.kernel @too_large_main(
// CHECK-SAME:    %Y: memref<?x?x64xf32, #tile.space<global>>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>

// -----

// Constant grid extent: 3 blocks along x all add into the same window; the
// grid extent bounds the split.
tile.kernel @constant_grid(%X: memref<?xf32, #tile.space<global>>, %Y: memref<?xf32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (3, s0 ceildiv 64) threads(128) as (%k, %m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["k", "m"]} {
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %r = tile.region %Y[%row] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  // expected-remark @+1 {{atomic_add into 'Y' (f32): blocks collide over block index k in 3 ways (split index k); split: each of the 3 splits updates its own slice of a zeroed f32 partial buffer with plain stores (each element is written once), and @constant_grid_Y_sum adds the slices into 'Y' in a fixed order}}
  tile.atomic_add %acc, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
}

// CHECK-LABEL: tile.kernel @constant_grid_main(
// CHECK-SAME:    %Y: memref<3x?xf32, #tile.space<global>>
// CHECK-NOT:     arith.remsi
// CHECK:         tile.region %Y[%k, %{{.*}}] [1, 64]
// CHECK:         tile.atomic_add {{.*}} exclusive

// -----

// Overlapping windows: 64 rows at stride 32, so neighbouring blocks overlap
// and blocks two apart do not: split index m mod 2.
tile.kernel @overlap(%X: memref<?xf32, #tile.space<global>>, %Y: memref<?xf32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 32) threads(128) as (%m)
    attributes {tile.arg_names = ["X", "Y"], tile.index_names = ["m"]} {
  %c32 = arith.constant 32 : index
  %acc = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c32 : index
  %r = tile.region %Y[%row] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  // expected-remark @+1 {{atomic_add into 'Y' (f32): blocks collide over block index m in 2 ways (split index m mod 2); split: each of the 2 splits updates its own slice of a zeroed f32 partial buffer with plain stores (each element is written once), and @overlap_Y_sum adds the slices into 'Y' in a fixed order}}
  tile.atomic_add %acc, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
}

// CHECK-LABEL: tile.kernel @overlap_main(
// CHECK:         arith.remsi %m, %c2

// -----

// Data-dependent element index inside tile.parallel: collisions within a block.
tile.kernel @in_parallel(%L: memref<?xi32, #tile.space<global>>, %H: memref<16xf32, #tile.space<global>>)
    grid(%L[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%m)
    attributes {tile.arg_names = ["L", "H"], tile.index_names = ["m"]} {
  %one = arith.constant 1.0 : f32
  %lab = tile.alloc : memref<64xi32, #tile.space<fragment>>
  tile.parallel (%i) in [64] {
    %l = memref.load %lab[%i] : memref<64xi32, #tile.space<fragment>>
    %b = arith.index_cast %l : i32 to index
    // expected-remark @+1 {{atomic_add into 'H' (f32): it is inside a tile.parallel loop, whose iterations may update the same element at the same time (index 0 is not a sum of loop and block indices with constant positive coefficients); split is not possible, so f32 atomics in place}}
    tile.atomic_add %one, %H[%b] : f32, memref<16xf32, #tile.space<global>>
  }
}

// CHECK-LABEL: tile.kernel @in_parallel_main(
// CHECK:         tile.atomic_add %{{.*}}, %H[%{{.*}}] : f32, memref<16xf32, #tile.space<global>>

// -----

// Two sites on one destination; a shared-memory destination; an integer one.
tile.kernel @multi(%X: memref<?xf32, #tile.space<global>>, %Y: memref<?xbf16, #tile.space<global>>, %C: memref<?xi32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%m)
    attributes {tile.arg_names = ["X", "Y", "C"], tile.index_names = ["m"]} {
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %i1 = arith.constant 1 : i32
  %acc = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %s = tile.alloc : memref<64xf32, #tile.space<shared>>
  %row = arith.muli %m, %c64 : index
  %r = tile.region %Y[%row] [64] : memref<?xbf16, #tile.space<global>> -> !tile.region<64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'Y' (bf16): 'Y' is updated by 2 atomic_add ops, and collisions between different ops are not analysed; split is not possible, so fp32: f32 atomics into an f32 workspace (@multi_Y_to_f32 before, @multi_Y_from_f32 after)}}
  tile.atomic_add %acc, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'Y' (bf16): 'Y' is updated by 2 atomic_add ops, and collisions between different ops are not analysed; split is not possible, so fp32: f32 atomics into an f32 workspace (@multi_Y_to_f32 before, @multi_Y_from_f32 after)}}
  tile.atomic_add %one, %Y[%row] : f32, memref<?xbf16, #tile.space<global>>
  // expected-remark @+1 {{atomic_add into a 64xf32 (shared): the block's own memory, left as written}}
  tile.atomic_add %acc, %s : memref<64xf32, #tile.space<fragment>>, memref<64xf32, #tile.space<shared>>
  // expected-remark @+1 {{atomic_add into 'C' (i32): each element is updated by one block only; plain read-modify-write in i32}}
  tile.atomic_add %i1, %C[%m] : i32, memref<?xi32, #tile.space<global>>
}

// CHECK-LABEL: tile.kernel @multi_main(
// CHECK-SAME:    %Y: memref<?xf32, #tile.space<global>>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64xf32, #tile.space<fragment>>, memref<64xf32, #tile.space<shared>>
// CHECK:         tile.atomic_add %{{.*}}, %C[%m] exclusive : i32

// With max-split=2 the 4-way and the 3-way splits are too large; the 2-way one fits.
// SMALL: remark: atomic_add into 'Y' (bf16): blocks collide over block index h in 4 ways (split index h mod 4): 4 splits, more than max-split=2; split is not possible, so fp32
// SMALL: remark: atomic_add into 'Y' (f32): blocks collide over block index k in 3 ways (split index k): 3 splits, more than max-split=2; split is not possible, so f32 atomics in place
// SMALL: remark: atomic_add into 'Y' (f32): blocks collide over block index m in 2 ways (split index m mod 2); split: each of the 2 splits
