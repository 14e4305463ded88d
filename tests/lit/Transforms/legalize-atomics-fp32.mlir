// tile-legalize-atomics, strategy fp32 (the default): bf16 destinations that
// blocks share become f32 workspaces with generated conversion kernels around
// the main kernel; the entry's plan allocates, launches and frees.
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics="strategy=fp32" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// dQ collides over the dynamic m, dK over h (2 ways): both get workspaces.
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

// REMARK: remark: atomic_add into 'dQ' (bf16): blocks collide over block index m, whose extent (seq ceildiv 64) is not a compile-time constant; fp32: f32 atomics into an f32 workspace (@bwd_dQ_to_f32 before, @bwd_dQ_from_f32 after)
// REMARK: remark: atomic_add into 'dK' (bf16): blocks collide over block index h in 2 ways (split index h mod 2); fp32: f32 atomics into an f32 workspace (@bwd_dK_to_f32 before, @bwd_dK_from_f32 after)

// The pre kernel: one block per chunk of 32 rows (along dim 1, the one before the last: 2048 elements per block)
// of dQ, ws <- f32(dQ).
// CHECK-LABEL: tile.kernel @bwd_dQ_to_f32(
// CHECK-SAME:    %[[D:[^:]*]]: memref<?x?x64xbf16, #tile.space<global>>, %[[W:[^:]*]]: memref<?x?x64xf32, #tile.space<global>>)
// CHECK-SAME:    grid(%[[D]][1], %[[D]][0]) ()[s0, s1] -> (s1 * (s0 ceildiv 32)) threads(128) as (%[[X:[^)]*]])
// CHECK-SAME:    tile.arg_names = ["dQ", "dQ_f32"]
// CHECK:         %[[CH:.*]] = arith.ceildivsi
// CHECK:         %[[C:.*]] = arith.remsi %[[X]], %[[CH]]
// CHECK:         %[[ROWS:.*]] = arith.divsi %[[X]], %[[CH]]
// CHECK:         %[[H:.*]] = memref.dim %[[D]], %c1
// CHECK:         %[[G:.*]] = arith.ceildivsi %[[H]], %c32
// CHECK:         %[[R1:.*]] = arith.remsi %[[ROWS]], %[[G]]
// CHECK:         %[[I0:.*]] = arith.divsi %[[ROWS]], %[[G]]
// CHECK:         %[[I1:.*]] = arith.muli %[[R1]], %c32
// CHECK:         %[[COL:.*]] = arith.muli %[[C]], %c64
// CHECK:         %[[DR:.*]] = tile.region %[[D]][%[[I0]], %[[I1]], %[[COL]]] [1, 32, 64] : memref<?x?x64xbf16, #tile.space<global>> -> !tile.region<32x64xbf16, global>
// CHECK:         %[[F:.*]] = tile.alloc : memref<32x64xf32, #tile.space<fragment>>
// CHECK:         %[[WR:.*]] = tile.region %[[W]][%[[I0]], %[[I1]], %[[COL]]] [1, 32, 64] : memref<?x?x64xf32, #tile.space<global>> -> !tile.region<32x64xf32, global>
// CHECK:         tile.copy %[[DR]], %[[F]] : !tile.region<32x64xbf16, global>, memref<32x64xf32, #tile.space<fragment>>
// CHECK-NEXT:    tile.copy %[[F]], %[[WR]] : memref<32x64xf32, #tile.space<fragment>>, !tile.region<32x64xf32, global>
// CHECK-NEXT:  }

// The post kernel: dQ <- round(ws).
// CHECK-LABEL: tile.kernel @bwd_dQ_from_f32(
// CHECK-SAME:    %[[W2:[^:]*]]: memref<?x?x64xf32, #tile.space<global>>, %[[D2:[^:]*]]: memref<?x?x64xbf16, #tile.space<global>>)
// CHECK:         %[[DR2:.*]] = tile.region %[[D2]]
// CHECK:         %[[F2:.*]] = tile.alloc : memref<32x64xf32, #tile.space<fragment>>
// CHECK:         %[[WR2:.*]] = tile.region %[[W2]]
// CHECK:         tile.copy %[[WR2]], %[[F2]] : !tile.region<32x64xf32, global>, memref<32x64xf32, #tile.space<fragment>>
// CHECK-NEXT:    tile.copy %[[F2]], %[[DR2]] : memref<32x64xf32, #tile.space<fragment>>, !tile.region<32x64xbf16, global>
// CHECK-NEXT:  }
// CHECK-LABEL: tile.kernel @bwd_dK_to_f32(
// CHECK-LABEL: tile.kernel @bwd_dK_from_f32(

// The main kernel takes f32 workspaces and keeps (f32) atomics.
// CHECK-LABEL: tile.kernel @bwd_main(
// CHECK-SAME:    %dQ: memref<?x?x64xf32, #tile.space<global>>, %dK: memref<?x?x64xf32, #tile.space<global>>)
// CHECK:         tile.pipelined
// CHECK:           tile.region %dQ[{{.*}}] [64, 1, 64] : memref<?x?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
// CHECK-NEXT:      tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
// CHECK:         tile.region %dK[{{.*}}] [64, 1, 64] : memref<?x?x64xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
// CHECK-NEXT:    tile.atomic_add %{{.*}}, %{{.*}} : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>

// The plan: user signature, workspaces sized from the destinations' dims.
// CHECK-LABEL: tile.entry @bwd(
// CHECK-SAME:    %X: memref<?x?x64xf32, #tile.space<global>>, %dQ: memref<?x?x64xbf16, #tile.space<global>>, %dK: memref<?x?x64xbf16, #tile.space<global>>)
// CHECK-SAME:    attributes {tile.arg_names = ["X", "dQ", "dK"], tile.dim_names = ["heads", "seq"]}
// CHECK:         %[[Q0:.*]] = memref.dim %dQ, %c0
// CHECK:         %[[Q1:.*]] = memref.dim %dQ, %c1
// CHECK:         %[[WQ:.*]] = tile.workspace [%[[Q0]], %[[Q1]]] : memref<?x?x64xf32, #tile.space<global>>
// CHECK-NEXT:    tile.launch @bwd_dQ_to_f32(%dQ, %[[WQ]])
// CHECK:         %[[WK:.*]] = tile.workspace [%{{.*}}, %{{.*}}] : memref<?x?x64xf32, #tile.space<global>>
// CHECK-NEXT:    tile.launch @bwd_dK_to_f32(%dK, %[[WK]])
// CHECK-NEXT:    tile.launch @bwd_main(%X, %[[WQ]], %[[WK]])
// CHECK-NEXT:    tile.launch @bwd_dQ_from_f32(%[[WQ]], %dQ)
// CHECK-NEXT:    tile.free %[[WQ]]
// CHECK-NEXT:    tile.launch @bwd_dK_from_f32(%[[WK]], %dK)
// CHECK-NEXT:    tile.free %[[WK]]
// CHECK-NEXT:  }

// -----

// Exclusive (one block per element) but repeated within the block: a plain
// read-modify-write into an f32 workspace, so the sum is rounded once. Once
// per block: a plain read-modify-write of the bf16 destination itself. An f32
// destination that blocks share keeps its f32 atomics; an i32 one too.
tile.kernel @mixed(%X: memref<?x64xf32, #tile.space<global>>, %A: memref<?x64xbf16, #tile.space<global>>, %B: memref<?x64xbf16, #tile.space<global>>, %S: memref<64xf32, #tile.space<global>>, %N: memref<4xi32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%m)
    attributes {tile.arg_names = ["X", "A", "B", "S", "N"], tile.index_names = ["m"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %i1 = arith.constant 1 : i32
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %row = arith.muli %m, %c64 : index
  %a = tile.region %A[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  scf.for %i = %c0 to %c4 step %c1 {
    tile.atomic_add %acc, %a : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
  %b = tile.region %B[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.atomic_add %acc, %b : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  %s = tile.region %S[%c0] [64] : memref<64xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  %row0 = tile.region %acc[%c0, %c0] [1, 64] : memref<64x64xf32, #tile.space<fragment>> -> !tile.region<64xf32, fragment>
  tile.atomic_add %row0, %s : !tile.region<64xf32, fragment>, !tile.region<64xf32, global>
  tile.atomic_add %i1, %N[%c0] : i32, memref<4xi32, #tile.space<global>>
}

// REMARK: remark: atomic_add into 'A' (bf16): each element is updated by one block only; the op repeats within a block, so it accumulates with plain read-modify-writes into an f32 workspace (@mixed_A_to_f32 before, @mixed_A_from_f32 after)
// REMARK: remark: atomic_add into 'B' (bf16): each element is updated by one block only; plain read-modify-write in bf16
// REMARK: remark: atomic_add into 'S' (f32): blocks collide over block index m, whose extent (s0 ceildiv 64) is not a compile-time constant; f32 atomics in place
// REMARK: remark: atomic_add into 'N' (i32): blocks collide over block index m, whose extent (s0 ceildiv 64) is not a compile-time constant; integer additions are exact in any order: i32 atomics in place

// CHECK-LABEL: tile.kernel @mixed_A_to_f32(
// CHECK-LABEL: tile.kernel @mixed_A_from_f32(
// CHECK-LABEL: tile.kernel @mixed_main(
// CHECK-SAME:    %A: memref<?x64xf32, #tile.space<global>>, %B: memref<?x64xbf16, #tile.space<global>>, %S: memref<64xf32, #tile.space<global>>, %N: memref<4xi32, #tile.space<global>>
// CHECK:         scf.for
// CHECK-NEXT:      tile.atomic_add %{{.*}}, %{{.*}} exclusive : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} exclusive : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} : !tile.region<64xf32, fragment>, !tile.region<64xf32, global>
// CHECK:         tile.atomic_add %{{.*}}, %N[%{{.*}}] : i32
// CHECK-LABEL: tile.entry @mixed(
// CHECK:         tile.workspace [%{{.*}}] : memref<?x64xf32, #tile.space<global>>
// CHECK-NEXT:    tile.launch @mixed_A_to_f32(%A,
// CHECK-NEXT:    tile.launch @mixed_main(%X, %{{.*}}, %B, %S, %N)
// CHECK-NEXT:    tile.launch @mixed_A_from_f32(
// CHECK-NEXT:    tile.free
// CHECK-NEXT:  }

// -----

// A kernel without atomics still gets its entry; running the pass again
// changes nothing (kernels that an entry launches are left alone).
// RUN: tile-opt %s -split-input-file -tile-legalize-atomics -tile-legalize-atomics 2>/dev/null | FileCheck %s --check-prefix=TWICE
tile.kernel @plain(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%m) {
}
// CHECK-LABEL: tile.kernel @plain_main(
// CHECK-LABEL: tile.entry @plain(
// CHECK-NEXT:    tile.launch @plain_main(
// CHECK-NEXT:  }
// TWICE-LABEL: tile.kernel @plain_main(
// TWICE-NEXT:  }
// TWICE-NEXT:  tile.entry @plain(
// TWICE-NEXT:    tile.launch @plain_main(
// TWICE-NEXT:  }
// TWICE-NEXT: }

// -----

// A destination the kernel also fills cannot be stood in for by an f32
// workspace (the fill's value has the destination's type): bf16 atomics stay.
tile.kernel @blocked(%X: memref<?xf32, #tile.space<global>>, %A: memref<?xbf16, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0) threads(128) as (%m)
    attributes {tile.arg_names = ["X", "A"], tile.index_names = ["m"]} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %acc = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %a = tile.region %A[%c0] [64] : memref<?xbf16, #tile.space<global>> -> !tile.region<64xbf16, global>
  tile.fill %a, %zero : !tile.region<64xbf16, global>
  tile.atomic_add %acc, %a : memref<64xf32, #tile.space<fragment>>, !tile.region<64xbf16, global>
}
// REMARK: remark: atomic_add into 'A' (bf16): blocks collide over block index m, whose extent (s0) is not a compile-time constant; fp32 is not possible because it is also accessed by 'tile.fill', so bf16 atomics in place
// CHECK-LABEL: tile.kernel @blocked_main(
// CHECK-SAME:    %A: memref<?xbf16, #tile.space<global>>
// CHECK-LABEL: tile.entry @blocked(
// CHECK-NEXT:    tile.launch @blocked_main(%X, %A)
// CHECK-NEXT:  }
