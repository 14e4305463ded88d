// tile-legalize-atomics with deterministic=true: every float destination must
// be exclusive or split; any other site is an error naming it and why.
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=split deterministic=true" -verify-diagnostics
// RUN: not tile-opt %s -split-input-file -tile-legalize-atomics="strategy=fp32 deterministic=true" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not tile-opt %s -split-input-file -tile-legalize-atomics="strategy=fast" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tile-opt %s -split-input-file -tile-legalize-atomics="max-split=0" 2>&1 | FileCheck %s --check-prefix=MAXSPLIT

// STRATEGY: error: tile-legalize-atomics: deterministic needs strategy=split, got 'fp32'
// UNKNOWN: for the --strategy option: Cannot find option named 'fast'!
// MAXSPLIT: error: tile-legalize-atomics: max-split must be at least 1, got 0

tile.kernel @bwd(%X: memref<?x?x64xf32, #tile.space<global>>, %dQ: memref<?x?x64xbf16, #tile.space<global>>, %dK: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "dQ", "dK"], tile.index_names = ["h", "m"], tile.dim_names = ["heads", "seq"]} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %seq = memref.dim %X, %c0 : memref<?x?x64xf32, #tile.space<global>>
  %blocks = arith.ceildivsi %seq, %c64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %blocks stages 2 {
    %qrow = arith.muli %n, %c64 : index
    %q = tile.region %dQ[%qrow, %h, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    // expected-error @+1 {{atomic_add into 'dQ' cannot be made deterministic: blocks collide over block index m, whose extent (seq ceildiv 64) is not a compile-time constant}}
    tile.atomic_add %acc, %q : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
  %krow = arith.muli %m, %c64 : index
  %g = arith.divsi %h, %c2 : index
  %k = tile.region %dK[%krow, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.atomic_add %acc, %k : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// -----

// Every site deterministic: exclusive f32, split bf16, integer anything.
tile.kernel @ok(%X: memref<?x?x64xf32, #tile.space<global>>, %Y: memref<?x?x64xf32, #tile.space<global>>, %dK: memref<?x?x64xbf16, #tile.space<global>>, %N: memref<4xi32, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "Y", "dK", "N"], tile.index_names = ["h", "m"]} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %i1 = arith.constant 1 : i32
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %krow = arith.muli %m, %c64 : index
  %y = tile.region %Y[%krow, %h, %c0] [64, 1, 64] : memref<?x?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
  // expected-remark @+1 {{atomic_add into 'Y' (f32): each element is updated by one block only; plain read-modify-write in f32}}
  tile.atomic_add %acc, %y : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
  %g = arith.divsi %h, %c2 : index
  %k = tile.region %dK[%krow, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'dK' (bf16): blocks collide over block index h in 2 ways (split index h mod 2); split: each of the 2 splits updates its own slice of a zeroed f32 partial buffer with plain stores (each element is written once), and @ok_dK_sum adds the slices into 'dK' in a fixed order}}
  tile.atomic_add %acc, %k : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  // expected-remark @+1 {{atomic_add into 'N' (i32): blocks collide over block index h, whose extent (s0) is not a compile-time constant; integer additions are exact in any order: i32 atomics in place}}
  tile.atomic_add %i1, %N[%c0] : i32, memref<4xi32, #tile.space<global>>
}

// -----

// A shared tile is the block's own, but an element-form float atomic inside
// tile.parallel still adds in any order; a region-form one does not.
tile.kernel @shared(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%m)
    attributes {tile.arg_names = ["X"], tile.index_names = ["m"]} {
  %one = arith.constant 1.0 : f32
  %lab = tile.alloc : memref<64xi32, #tile.space<fragment>>
  %h = tile.alloc : memref<16xf32, #tile.space<shared>>
  %acc = tile.alloc : memref<16xf32, #tile.space<fragment>>
  // expected-remark @+1 {{atomic_add into a 16xf32 (shared): the block's own memory, left as written}}
  tile.atomic_add %acc, %h : memref<16xf32, #tile.space<fragment>>, memref<16xf32, #tile.space<shared>>
  tile.parallel (%i) in [64] {
    %l = memref.load %lab[%i] : memref<64xi32, #tile.space<fragment>>
    %b = arith.index_cast %l : i32 to index
    // expected-error @+1 {{atomic_add into a 16xf32 (shared) cannot be made deterministic: it is inside a tile.parallel loop, whose iterations may update the same element in any order}}
    tile.atomic_add %one, %h[%b] : f32, memref<16xf32, #tile.space<shared>>
  }
}
