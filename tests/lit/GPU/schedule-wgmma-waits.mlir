// tile-schedule-wgmma-waits: a gemm on wgmma stays in flight until the first op that touches its accumulator (or
// its register A operand), a barrier, a prefetching pipelined loop, or the end of the block that issued it; groups
// complete in commit order, so a wait keeps the later ones in flight. Running the pass twice gives the same waits.
// RUN: tile-opt %s -split-input-file -tile-schedule-wgmma-waits | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-schedule-wgmma-waits -tile-schedule-wgmma-waits | FileCheck %s

// Two independent gemms: reading the first's accumulator waits for it alone (the second stays in flight), then
// reading the second's waits for the rest. Nothing is left to wait for at the end.
// CHECK-LABEL: tile.kernel @two_gemms
// CHECK:      tile.gemm %a_s, %b_s -> %acc1
// CHECK-NEXT: tile.gemm %a_s, %b_s -> %acc2
// CHECK-NEXT: tile.wgmma_wait pending 1 (%acc1) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.copy %acc1, %out
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc2) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.copy %acc2, %out
// CHECK-NOT:  tile.wgmma_wait
// CHECK:      }
tile.kernel @two_gemms(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc1 = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc1")
  %acc2 = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc2")
  %out = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("out")
  tile.gemm %a_s, %b_s -> %acc1 clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.gemm %a_s, %b_s -> %acc2 clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.copy %acc1, %out : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
  tile.copy %acc2, %out : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
}

// -----

// A barrier: every group in flight first (other threads may overwrite the shared operands after it); a gemm on
// mma.sync (no tile.wgmma) is never waited for; the last gemm is waited for at the end of the kernel.
// CHECK-LABEL: tile.kernel @barrier_and_end
// CHECK:      tile.gemm %a_s, %b_s -> %acc
// CHECK-NEXT: tile.gemm %a_s, %b_s -> %sync
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.gemm %a_s, %b_s -> %acc
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: }
tile.kernel @barrier_and_end(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %sync = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("sync")
  tile.gemm %a_s, %b_s -> %acc clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.gemm %a_s, %b_s -> %sync clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.barrier
  tile.gemm %a_s, %b_s -> %acc {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
}

// -----

// A loop body waits for what it issued before the back edge. A branch: a wait inside it may not run, so the group
// issued before it is waited for again after it.
// CHECK-LABEL: tile.kernel @loop_and_branch
// CHECK:      tile.pipelined
// CHECK-NEXT:   tile.gemm %a_s, %b_s -> %acc
// CHECK-NEXT:   tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: }
// CHECK-NEXT: tile.gemm %a_s, %b_s -> %acc
// CHECK-NEXT: scf.if
// CHECK-NEXT:   tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT: }
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.copy %acc, %out
tile.kernel @loop_and_branch(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %odd = arith.cmpi slt, %i, %c4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %out = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("out")
  tile.pipelined %n = %c0 to %c4 stages 1 {
    tile.gemm %a_s, %b_s -> %acc {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
  tile.gemm %a_s, %b_s -> %acc {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  scf.if %odd {
    tile.barrier
  }
  tile.copy %acc, %out : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
}

// -----

// A register A operand is the group's too: overwriting it waits. A pipelined loop that prefetches starts each
// iteration with a barrier: the groups in flight are waited for before it.
// CHECK-LABEL: tile.kernel @register_a_and_prefetch
// CHECK:      tile.gemm %p, %b_s -> %acc
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.fill %p
// CHECK-NEXT: tile.gemm %p, %b_s -> %acc
// CHECK-NEXT: tile.wgmma_wait pending 0 (%acc) : memref<64x64xf32, #tile.space<fragment>>
// CHECK-NEXT: tile.pipelined
tile.kernel @register_a_and_prefetch(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : bf16
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %p = tile.alloc {tile.layout = #tile.mma_a<[64, 64], warps [4, 1]>} : memref<64x64xbf16, #tile.space<fragment>> loc("p")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  tile.gemm %p, %b_s -> %acc clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.fill %p, %one : memref<64x64xbf16, #tile.space<fragment>>
  tile.gemm %p, %b_s -> %acc {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x64xbf16, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %c4 stages 2 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %b_s {tile.prefetch} : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  }
}
