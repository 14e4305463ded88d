// tile-expand-pipelines: a pipelined loop with prefetched copies (tile-multi-buffer) becomes a prologue, an scf.for
// whose iterations wait for their own copies, view their buffer and prefetch stages - 1 iterations ahead, and a
// final wait. Any trip count works (0 and 1 included): every prefetch is guarded by the upper bound and commits a
// group either way, so the waits count one group per iteration. Running the pass twice changes nothing more.
// RUN: tile-opt %s -split-input-file -tile-expand-pipelines | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-expand-pipelines -tile-expand-pipelines | FileCheck %s

// Two stages: one prologue group (iteration lo, buffer 0); iteration n waits for all groups (its own is the latest),
// prefetches n + 1 into buffer (n + 1) mod 2. The offset arithmetic of the copy is cloned for the prefetched
// iteration; the body keeps what it uses itself (%keep) and loses what only the copy used.
// CHECK-LABEL: tile.kernel @two_stages
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[C2:.*]] = arith.constant 2 : index
// CHECK:      %[[A:.*]] = tile.alloc {tile.stages = 2 : i64}
// CHECK-NEXT: %[[ACC:.*]] = tile.alloc
// CHECK-NEXT: %[[IN0:.*]] = arith.cmpi slt, %[[C0]], %[[HI:.*]] : index
// CHECK-NEXT: scf.if %[[IN0]] {
// CHECK-NEXT:   %[[ROW0:.*]] = arith.muli %[[C0]], %{{.*}} : index
// CHECK-NEXT:   %[[R0:.*]] = tile.region %arg0[%[[ROW0]], %[[C0]]] [64, 64]
// CHECK-NEXT:   %[[V0:.*]] = tile.stage_view %[[A]][%[[C0]]] : memref<64x64xbf16, #tile.space<shared>>
// CHECK-NEXT:   tile.async_copy %[[R0]], %[[V0]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.async_commit
// CHECK-NEXT: scf.for %[[N:.*]] = %[[C0]] to %[[HI]] step %[[C1]] {
// CHECK-NEXT:   tile.async_wait pending 0
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %[[STAGE:.*]] = arith.remsi %[[N]], %[[C2]] : index
// CHECK-NEXT:   %[[VN:.*]] = tile.stage_view %[[A]][%[[STAGE]]]
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[N]], %[[C1]] : index
// CHECK-NEXT:   %[[NEXT_STAGE:.*]] = arith.remsi %[[NEXT]], %[[C2]] : index
// CHECK-NEXT:   %[[AHEAD:.*]] = arith.cmpi slt, %[[NEXT]], %[[HI]] : index
// CHECK-NEXT:   scf.if %[[AHEAD]] {
// CHECK-NEXT:     %[[ROW1:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:     %[[R1:.*]] = tile.region %arg0[%[[ROW1]], %[[C0]]] [64, 64]
// CHECK-NEXT:     %[[V1:.*]] = tile.stage_view %[[A]][%[[NEXT_STAGE]]]
// CHECK-NEXT:     tile.async_copy %[[R1]], %[[V1]]
// CHECK-NEXT:   }
// CHECK-NEXT:   tile.async_commit
// CHECK-NEXT:   %[[KEEP:.*]] = arith.addi %[[N]], %{{.*}} : index
// CHECK-NEXT:   tile.copy %[[VN]], %[[ACC]]
// CHECK-NEXT:   tile.region %arg0[%[[KEEP]], %[[C0]]]
// CHECK-NEXT:   tile.copy %[[ACC]], %{{.*}} : memref<64x64xbf16, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
// CHECK-NEXT: }
// CHECK-NEXT: tile.async_wait pending 0
// CHECK-NOT:  tile.pipelined
// CHECK-NOT:  tile.prefetch
tile.kernel @two_stages(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %hi = memref.dim %X, %c0 : memref<?x64xbf16, #tile.space<global>>
  %a_s = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %acc = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %hi stages 2 {
    %row = arith.muli %n, %c64 : index
    %r = tile.region %X[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    %keep = arith.addi %n, %c64 : index
    tile.copy %a_s, %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<fragment>>
    %out = tile.region %X[%keep, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %acc, %out : memref<64x64xbf16, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  }
}

// -----

// Three stages, and bounds that depend on the block index (a causal loop starting at the block's diagonal): the
// prologue issues iterations lo and lo + 1 into buffers 0 and 1; iteration n waits until at most one group is
// pending, reads buffer (n - lo) mod 3 and prefetches n + 2 into buffer (n + 2 - lo) mod 3.
// CHECK-LABEL: tile.kernel @three_stages_causal
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:  %[[C3:.*]] = arith.constant 3 : index
// CHECK:      %[[LO:.*]] = arith.muli %arg1, %{{.*}} : index
// CHECK:      arith.cmpi slt, %[[LO]], %[[HI:.*]] : index
// CHECK:      tile.stage_view %{{.*}}[%[[C0]]]
// CHECK:      tile.async_commit
// CHECK-NEXT: %[[IT1:.*]] = arith.addi %[[LO]], %[[C1]] : index
// CHECK-NEXT: arith.cmpi slt, %[[IT1]], %[[HI]] : index
// CHECK:      tile.stage_view %{{.*}}[%[[C1]]]
// CHECK:      tile.async_commit
// CHECK-NEXT: scf.for %[[N:.*]] = %[[LO]] to %[[HI]] step %[[C1]] {
// CHECK-NEXT:   tile.async_wait pending 1
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %[[FROM:.*]] = arith.subi %[[N]], %[[LO]] : index
// CHECK-NEXT:   %[[STAGE:.*]] = arith.remsi %[[FROM]], %[[C3]] : index
// CHECK-NEXT:   tile.stage_view %{{.*}}[%[[STAGE]]]
// CHECK-NEXT:   tile.stage_view %{{.*}}[%[[STAGE]]]
// CHECK-NEXT:   %[[NEXT:.*]] = arith.addi %[[N]], %[[C2]] : index
// CHECK-NEXT:   %[[NFROM:.*]] = arith.subi %[[NEXT]], %[[LO]] : index
// CHECK-NEXT:   %[[NSTAGE:.*]] = arith.remsi %[[NFROM]], %[[C3]] : index
// CHECK-NEXT:   arith.cmpi slt, %[[NEXT]], %[[HI]] : index
// CHECK:          tile.stage_view %{{.*}}[%[[NSTAGE]]]
// CHECK-NEXT:     tile.async_copy
// CHECK-NEXT:     tile.stage_view %{{.*}}[%[[NSTAGE]]]
// CHECK-NEXT:     tile.async_copy
// CHECK:        tile.async_commit
// CHECK:      tile.async_wait pending 0
tile.kernel @three_stages_causal(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %hi = memref.dim %X, %c0 : memref<?x64xbf16, #tile.space<global>>
  %lo = arith.muli %i, %c2 : index
  %a_s = tile.alloc {tile.stages = 3 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %b_s = tile.alloc {tile.stages = 3 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %acc = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  tile.pipelined %n = %lo to %hi stages 3 {
    %row = arith.muli %n, %c64 : index
    %r = tile.region %X[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.copy %r, %b_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.copy %a_s, %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<fragment>>
    tile.copy %b_s, %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<fragment>>
  }
}

// -----

// Four stages over a loop of static trip count 1: three prologue groups (iterations 0, 1, 2; the guards of 1 and 2
// are false at run time), waits leaving two pending, prefetch three ahead.
// CHECK-LABEL: tile.kernel @four_stages_one_trip
// CHECK-DAG:  %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:  %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:  %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:  %[[C4:.*]] = arith.constant 4 : index
// CHECK:      arith.cmpi slt, %[[C0]], %[[C1]] : index
// CHECK:      tile.async_commit
// CHECK:      arith.cmpi slt, %{{.*}}, %[[C1]] : index
// CHECK:      tile.async_commit
// CHECK:      arith.cmpi slt, %{{.*}}, %[[C1]] : index
// CHECK:      tile.stage_view %{{.*}}[%{{.*}}]
// CHECK:      tile.async_commit
// CHECK-NEXT: scf.for %[[N:.*]] = %[[C0]] to %[[C1]] step %[[C1]] {
// CHECK-NEXT:   tile.async_wait pending 2
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   arith.remsi %[[N]], %[[C4]] : index
// CHECK-NEXT:   tile.stage_view
// CHECK-NEXT:   arith.addi %[[N]], %[[C3]] : index
// CHECK:      tile.async_wait pending 0
tile.kernel @four_stages_one_trip(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a_s = tile.alloc {tile.stages = 4 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %acc = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %c1 stages 4 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.copy %a_s, %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<fragment>>
  }
}

// -----

// A loop of trip count 0 keeps the same schedule: the prologue's guard is false and the loop does not run; the
// final wait has nothing to wait for.
// CHECK-LABEL: tile.kernel @zero_trips
// CHECK:      %[[IN:.*]] = arith.cmpi slt, %[[C0:.*]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK:      tile.async_commit
// CHECK-NEXT: scf.for %{{.*}} = %[[C0]] to %[[C0]] step
// CHECK:      tile.async_wait pending 0
tile.kernel @zero_trips(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %acc = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %c0 stages 2 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.copy %a_s, %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<fragment>>
  }
}

// -----

// Stages 1, or nothing to prefetch: a plain scf.for with the same body, no asynchronous copies, no barrier; the
// register-pressure decision (tile.reread_thread_index) moves to it.
// CHECK-LABEL: tile.kernel @plain
// CHECK-NOT:  tile.async
// CHECK:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:   tile.region %arg0[%[[N]], %{{.*}}]
// CHECK-NEXT:   tile.copy
// CHECK-NEXT: }
// CHECK-NEXT: scf.for
// CHECK-NEXT:   tile.region
// CHECK-NEXT:   tile.copy
// CHECK-NEXT: } {tile.reread_thread_index}
// CHECK-NOT:  tile.async
// CHECK-NOT:  tile.barrier
tile.kernel @plain(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %hi = memref.dim %X, %c0 : memref<?x64xbf16, #tile.space<global>>
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  tile.pipelined %n = %c0 to %hi stages 1 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  }
  tile.pipelined %n = %c0 to %hi stages 3 attributes {tile.reread_thread_index} {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  }
}
