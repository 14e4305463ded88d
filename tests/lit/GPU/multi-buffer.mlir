// tile-multi-buffer: which copies of a pipelined loop are prefetched into multi-buffered shared tiles, and why the
// others are not (a remark at each). Then the plan (one buffer per stage) and the barriers (none in the body for a
// prefetched tile: the emitter's wait + barrier at the top of each iteration orders it).
// RUN: tile-opt %s -split-input-file -tile-multi-buffer -verify-diagnostics | FileCheck %s
// RUN: tile-opt %s -split-input-file -tile-multi-buffer -tile-plan-shared-memory -tile-place-barriers \
// RUN:   -verify-diagnostics | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: tile.kernel @prefetch
// CHECK: %a_s = tile.alloc {tile.stages = 3 : i64}
// CHECK: %b_s = tile.alloc : memref<64x64xbf16
// CHECK: tile.pipelined
// CHECK: tile.copy %{{.*}}, %a_s {tile.prefetch}
// Three 8 KB buffers for a_s, then b_s.
// PLAN-LABEL: tile.kernel @prefetch
// PLAN-SAME: tile.shared_bytes = 32768 : i64
// PLAN: %a_s = tile.alloc {tile.offset = 0 : i64, tile.stage_bytes = 8192 : i64, tile.stages = 3 : i64
// PLAN: %b_s = tile.alloc {tile.offset = 24576 : i64
// No tile.barrier at all: the prologue's copies write other bytes than b_s's copy, and the barrier the emitter puts
// at the top of every iteration orders b_s's copy and a_s's prefetches before the gemm that reads them.
// PLAN-NOT: tile.barrier
// PLAN: tile.gemm %a_s, %b_s
// PLAN-NOT: tile.barrier
// PLAN: tile.kernel @refused
tile.kernel @prefetch(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %rb = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.copy %rb, %b_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  tile.pipelined %n = %c0 to %c4 stages 3 {
    %c64 = arith.constant 64 : index
    %row = arith.muli %n, %c64 : index
    %r = tile.region %X[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %a_s, %b_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
}

// -----

// Each reason a copy stays where it is.
// CHECK-LABEL: tile.kernel @refused
// CHECK-NOT: tile.prefetch
// CHECK-NOT: tile.stages
tile.kernel @refused(%X: memref<?x64xbf16, #tile.space<global>>, %D: memref<?x?xbf16, #tile.space<global>>, %I: memref<?xi32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %c_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("c_s")
  %d_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("d_s")
  %e_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("e_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %zero = arith.constant 0.0 : bf16
  // expected-remark @+1 {{no copy from global into a shared tile can be prefetched; it runs as a plain loop}}
  tile.pipelined %n = %c0 to %c4 stages 2 {
    // expected-remark @+2 {{copy into 'a_s' is not prefetched: cp.async moves 16-byte chunks and this copy cannot}}
    %r0 = tile.region %D[%n, %c4] [64, 64] : memref<?x?xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r0, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    // expected-remark @+4 {{copy into 'b_s' is not prefetched: its source region's offsets depend on values computed in the loop by more than index arithmetic}}
    %k = memref.load %I[%n] : memref<?xi32, #tile.space<global>>
    %row = arith.index_cast %k : i32 to index
    %r1 = tile.region %X[%row, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r1, %b_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %c_s, %a_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
    // expected-remark @+2 {{copy into 'c_s' is not prefetched: its shared tile 'c_s' is used in the body before the copy}}
    %r2 = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r2, %c_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    // expected-remark @+1 {{copy into 'd_s' is not prefetched: something else in the loop writes its shared tile 'd_s'}}
    tile.copy %r2, %d_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.fill %d_s, %zero : memref<64x64xbf16, #tile.space<shared>>
    // expected-remark @+1 {{copy into 'e_s' is not prefetched: its shared tile 'e_s' is also used outside the loop}}
    tile.copy %r2, %e_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  }
  tile.gemm %e_s, %e_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
}

// -----

// A loop that also writes the tensor it would prefetch from.
tile.kernel @writes_source(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) attributes {tile.arg_names = ["X"]} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  // expected-remark @+1 {{runs as a plain loop}}
  tile.pipelined %n = %c0 to %c4 stages 2 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    // expected-remark @+1 {{the loop also writes 'X', which an early copy could read before the write}}
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.copy %a_s, %r : memref<64x64xbf16, #tile.space<shared>>, !tile.region<64x64xbf16, global>
  }
}

// -----

tile.kernel @too_many(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{pipelined loop with stages 9: the GPU lowering supports at most 8 stages}}
  tile.pipelined %n = %c0 to %c4 stages 9 {
  }
}

// -----

// c_s is dead once the loop starts, so a_s's buffers reuse its bytes: the prologue's copies would overwrite what the
// first gemm reads, so a barrier goes before the loop.
// CHECK-LABEL: tile.kernel @prologue
// PLAN-LABEL: tile.kernel @prologue
// PLAN: %a_s = tile.alloc {tile.offset = 0 : i64, tile.stage_bytes = 8192 : i64, tile.stages = 2 : i64
// PLAN: %c_s = tile.alloc {tile.offset = 0 : i64
// PLAN: tile.gemm %c_s, %c_s
// PLAN-NEXT: tile.barrier
// PLAN-NEXT: tile.pipelined
// PLAN-NOT: tile.barrier
// PLAN: }
tile.kernel @prologue(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %c_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("c_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  tile.gemm %c_s, %c_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.pipelined %n = %c0 to %c4 stages 2 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %a_s, %a_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
}

// -----

// A dynamic last dim qualifies: the emitter checks at run time that the 16-byte chunks are aligned (and fills the
// buffer with plain stores when they are not), so the copy is prefetched like a static one.
// CHECK-LABEL: tile.kernel @dynamic_last_dim
// CHECK: %a_s = tile.alloc {tile.stages = 2 : i64}
// CHECK: tile.copy %{{.*}}, %a_s {tile.prefetch}
tile.kernel @dynamic_last_dim(%D: memref<?x?xbf16, #tile.space<global>>) grid(%D[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  tile.pipelined %n = %c0 to %c4 stages 2 {
    %c64 = arith.constant 64 : index
    %col = arith.muli %n, %c64 : index
    %r = tile.region %D[%c0, %col] [64, 64] : memref<?x?xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %a_s, %b_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
}
