// tile-legalize-atomics, strategy split: a destination that blocks share in a
// constant number of ways gets a zeroed f32 partial buffer [splits, ...], one
// slice per split updated with plain read-modify-writes, and a generated sum
// kernel adds the slices into it in a fixed order. Sites where split is not
// legal get the fp32 treatment, and the remark says why.
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=split" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=split" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

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

// REMARK: remark: atomic_add into 'dQ' (bf16): blocks collide over block index m, whose extent (seq ceildiv 64) is not a compile-time constant; split is not possible, so fp32: f32 atomics into an f32 workspace (@bwd_dQ_to_f32 before, @bwd_dQ_from_f32 after)
// REMARK: remark: atomic_add into 'dK' (bf16): blocks collide over block index h in 2 ways (split index h mod 2); split: each of the 2 splits updates its own slice of a zeroed f32 partial buffer with plain stores (each element is written once), and @bwd_dK_sum adds the slices into 'dK' in a fixed order

// CHECK-LABEL: tile.kernel @bwd_dQ_to_f32(
// CHECK-LABEL: tile.kernel @bwd_dQ_from_f32(

// The sum kernel: dK <- round(f32(dK) + partial[0] + partial[1]), in order; 32 rows of 64 per block.
// CHECK-LABEL: tile.kernel @bwd_dK_sum(
// CHECK-SAME:    %[[P:[^:]*]]: memref<2x?x?x64xf32, #tile.space<global>>, %[[D:[^:]*]]: memref<?x?x64xbf16, #tile.space<global>>)
// CHECK-SAME:    grid(%[[D]][1], %[[D]][0]) ()[s0, s1] -> (s1 * (s0 ceildiv 32)) threads(128)
// CHECK-SAME:    tile.arg_names = ["dK_partial", "dK"]
// CHECK:         %[[DR:.*]] = tile.region %[[D]][%[[I0:[^,]*]], %[[I1:[^,]*]], %[[COL:[a-z0-9_]*]]] [1, 32, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<32x64xbf16, global>
// CHECK:         %[[SUM:.*]] = tile.alloc : memref<32x64xf32, #tile.space<fragment>>
// CHECK:         %[[PART:.*]] = tile.alloc : memref<32x64xf32, #tile.space<fragment>>
// CHECK:         tile.copy %[[DR]], %[[SUM]] : !tile.region<32x64xbf16, global>, memref<32x64xf32, #tile.space<fragment>>
// CHECK:         scf.for %[[S:.*]] = %{{.*}} to %c2{{.*}} step
// CHECK-NEXT:      %[[PR:.*]] = tile.region %[[P]][%[[S]], %[[I0]], %[[I1]], %[[COL]]] [1, 1, 32, 64] : memref<2x?x?x64xf32, #tile.space<global>> -> !tile.region<32x64xf32, global>
// CHECK-NEXT:      tile.copy %[[PR]], %[[PART]]
// CHECK-NEXT:      tile.parallel (%[[I:.*]], %[[J:.*]]) in [32, 64] {
// CHECK-NEXT:        %[[A:.*]] = memref.load %[[SUM]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[B:.*]] = memref.load %[[PART]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[AB:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[AB]], %[[SUM]][%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.copy %[[SUM]], %[[DR]] : memref<32x64xf32, #tile.space<fragment>>, !tile.region<32x64xbf16, global>
// CHECK-NEXT:  }

// The main kernel: split index h mod 2 in front of dK's offsets.
// CHECK-LABEL: tile.kernel @bwd_main(
// CHECK-SAME:    %dQ: memref<?x?x64xf32, #tile.space<global>>, %dK: memref<2x?x?x64xf32, #tile.space<global>>)
// CHECK:         %[[SPLIT:.*]] = arith.remsi %h, %c2
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
// CHECK:         %[[G:.*]] = arith.divsi %h, %c2
// CHECK:         %[[KR:.*]] = tile.region %dK[%[[SPLIT]], %{{.*}}, %[[G]], %c0] [1, 64, 1, 64] : memref<2x?x?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
// CHECK-NEXT:    tile.atomic_add %{{.*}}, %[[KR]] exclusive write_once : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>

// The plan: the partial buffer is zeroed, summed after the main kernel, freed.
// CHECK-LABEL: tile.entry @bwd(
// CHECK:         %[[WQ:.*]] = tile.workspace [%{{.*}}, %{{.*}}] : memref<?x?x64xf32, #tile.space<global>>
// CHECK-NEXT:    tile.launch @bwd_dQ_to_f32(%dQ, %[[WQ]])
// CHECK:         %[[K0:.*]] = memref.dim %dK, %c0
// CHECK-NEXT:    %[[K1:.*]] = memref.dim %dK, %c1
// CHECK-NEXT:    %[[PK:.*]] = tile.workspace [%[[K0]], %[[K1]]] zeroed : memref<2x?x?x64xf32, #tile.space<global>>
// CHECK-NEXT:    tile.launch @bwd_main(%X, %[[WQ]], %[[PK]])
// CHECK-NEXT:    tile.launch @bwd_dQ_from_f32(%[[WQ]], %dQ)
// CHECK-NEXT:    tile.free %[[WQ]]
// CHECK-NEXT:    tile.launch @bwd_dK_sum(%[[PK]], %dK)
// CHECK-NEXT:    tile.free %[[PK]]
// CHECK-NEXT:  }

// -----

// Element form with a data-dependent bin in a serial loop (a histogram):
// rows r and r' collide when r / 4 == r' / 4, so 4 splits; the split index
// goes in front of the indices and memref.dim of the destination shifts by one.
tile.kernel @hist(%L: memref<?x16xi32, #tile.space<global>>, %H: memref<?x8xbf16, #tile.space<global>>)
    grid(%L[0]) ()[s0] -> (s0) threads(128) as (%r)
    attributes {tile.arg_names = ["L", "H"], tile.index_names = ["r"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %lab = tile.alloc : memref<16xi32, #tile.space<fragment>>
  %g = arith.divsi %r, %c4 : index
  %bins = memref.dim %H, %c1 : memref<?x8xbf16, #tile.space<global>>
  scf.for %j = %c0 to %c16 step %c1 {
    %l = memref.load %lab[%j] : memref<16xi32, #tile.space<fragment>>
    %b = arith.index_cast %l : i32 to index
    %bb = arith.minsi %b, %bins : index
    tile.atomic_add %one, %H[%g, %bb] : f32, memref<?x8xbf16, #tile.space<global>>
  }
}
// REMARK: remark: atomic_add into 'H' (bf16): blocks collide over block index r in 4 ways (split index r mod 4); split: each of the 4 splits
// CHECK-LABEL: tile.kernel @hist_H_sum(
// CHECK-SAME:    memref<4x?x8xf32, #tile.space<global>>
// CHECK-LABEL: tile.kernel @hist_main(
// CHECK-SAME:    %H: memref<4x?x8xf32, #tile.space<global>>
// CHECK:         %[[S:.*]] = arith.remsi %r, %c4
// CHECK:         tile.alloc
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %c1{{(_[0-9]+)?}}, %[[ONE]] : index
// CHECK-NEXT:    memref.dim %H, %[[NEXT]] : memref<4x?x8xf32, #tile.space<global>>
// CHECK:         tile.atomic_add %{{.*}}, %H[%[[S]], %{{.*}}, %{{.*}}] exclusive : f32, memref<4x?x8xf32, #tile.space<global>>

// -----

// dK would split, but the kernel also reads it: partial slices cannot stand
// in for it, so fp32 (which can) is used instead.
tile.kernel @reads(%X: memref<?x?x64xf32, #tile.space<global>>, %dK: memref<?x?x64xbf16, #tile.space<global>>)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0, s1 ceildiv 64) threads(128) as (%h, %m)
    attributes {tile.arg_names = ["X", "dK"], tile.index_names = ["h", "m"]} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %krow = arith.muli %m, %c64 : index
  %g = arith.divsi %h, %c2 : index
  %k = tile.region %dK[%krow, %g, %c0] [64, 1, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.copy %k, %acc : !tile.region<64x64xbf16, global>, memref<64x64xf32, #tile.space<fragment>>
  tile.atomic_add %acc, %k : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}
// REMARK: remark: atomic_add into 'dK' (bf16): blocks collide over block index h in 2 ways (split index h mod 2); split is not possible because it is also accessed by 'tile.copy', so fp32: f32 atomics into an f32 workspace (@reads_dK_to_f32 before, @reads_dK_from_f32 after)
// CHECK-LABEL: tile.kernel @reads_main(
// CHECK-SAME:    %dK: memref<?x?x64xf32, #tile.space<global>>

// -----

// The grid is bound to a dim of the destination that gets split: the grid
// operand moves one axis further, onto the partial buffer's matching dim.
tile.kernel @grid_on_dst(%Y: memref<?x64xf32, #tile.space<global>>)
    grid(%Y[0]) ()[s0] -> (s0 ceildiv 64, 2) threads(128) as (%m, %k)
    attributes {tile.arg_names = ["Y"], tile.index_names = ["m", "k"]} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %r = tile.region %Y[%row, %c0] [64, 64] : memref<?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
  tile.atomic_add %acc, %r : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
}
// REMARK: remark: atomic_add into 'Y' (f32): blocks collide over block index k in 2 ways (split index k); split
// CHECK-LABEL: tile.kernel @grid_on_dst_main(
// CHECK-SAME:    %Y: memref<2x?x64xf32, #tile.space<global>>) grid(%Y[1]) ()[s0] -> (s0 ceildiv 64, 2)
// CHECK:         tile.region %Y[%k, %{{.*}}, %c0] [1, 64, 64]
// CHECK-LABEL: tile.entry @grid_on_dst(
// CHECK:         tile.launch @grid_on_dst_main(
