// tile-legalize-atomics, strategy native: atomics stay in the destination's
// dtype; only exclusive destinations change (to a plain read-modify-write).
// The entry is a single launch.
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=native" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=native" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

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
    tile.atomic_add %acc, %q : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
  %krow = arith.muli %m, %c64 : index
  %g = arith.divsi %h, %c2 : index
  %k = tile.region %dK[%krow, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.atomic_add %acc, %k : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// REMARK: remark: atomic_add into 'dQ' (bf16): blocks collide over block index m, whose extent (seq ceildiv 64) is not a compile-time constant; native: bf16 atomics in place
// REMARK: remark: atomic_add into 'dK' (bf16): blocks collide over block index h in 2 ways (split index h mod 2); native: bf16 atomics in place

// CHECK-NOT:     tile.kernel @bwd_d
// CHECK-LABEL: tile.kernel @bwd_main(
// CHECK-SAME:    %dQ: memref<?x?x64xbf16, #tile.space<global>>, %dK: memref<?x?x64xbf16, #tile.space<global>>)
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK-LABEL: tile.entry @bwd(
// CHECK-NEXT:    tile.launch @bwd_main(%X, %dQ, %dK)
// CHECK-NEXT:  }

// -----

// Exclusive under native: plain read-modify-write in bf16, even in a loop.
tile.kernel @excl(%X: memref<?x64xf32, #tile.space<global>>, %A: memref<?x64xbf16, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%m)
    attributes {tile.arg_names = ["X", "A"], tile.index_names = ["m"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %a = tile.region %A[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  scf.for %i = %c0 to %c4 step %c1 {
    tile.atomic_add %acc, %a : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
}
// REMARK: remark: atomic_add into 'A' (bf16): each element is updated by one block only; plain read-modify-write in bf16
// CHECK-LABEL: tile.kernel @excl_main(
// CHECK-SAME:    %A: memref<?x64xbf16, #tile.space<global>>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} exclusive : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK-LABEL: tile.entry @excl(
// CHECK-NEXT:    tile.launch @excl_main(%X, %A)
// CHECK-NEXT:  }
