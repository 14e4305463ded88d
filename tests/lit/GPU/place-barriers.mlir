// tile-place-barriers: a barrier wherever threads would read bytes other threads wrote (or overwrite bytes they
// read) since the last barrier; none between ops on disjoint tiles or on per-thread fragments; loop bodies are
// checked across iterations.
// RUN: tile-opt %s -split-input-file -tile-plan-shared-memory -tile-place-barriers | FileCheck %s

// CHECK-LABEL: tile.kernel @chain
// Two copies into different tiles: no barrier between them; the gemm reads both: one barrier before it.
// CHECK:      tile.copy %{{.*}}, %a_s
// CHECK-NEXT: tile.copy %{{.*}}, %b_s
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.gemm %a_s, %b_s
// c_s reuses a_s's bytes (tile-plan-shared-memory: a_s is dead after the gemm), so writing it waits for the gemm's
// reads; reading c_s back waits for the writes.
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.copy %acc, %c_s
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.copy %c_s
// CHECK-NOT: tile.barrier
tile.kernel @chain(%X: memref<?x64xbf16, #tile.space<global>>, %Y: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %c_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("c_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %out = tile.alloc {tile.layout = #tile.blocked<[64, 64], vec 4>} : memref<64x64xf32, #tile.space<fragment>> loc("out")
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  tile.copy %r, %b_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  tile.gemm %a_s, %b_s -> %acc clear : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  tile.copy %acc, %c_s : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>
  tile.copy %c_s, %out : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  %w = tile.region %Y[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.copy %out, %w : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// -----

// In a loop, the copy at the top of iteration n+1 overwrites what the gemm of iteration n reads: a barrier at the
// top of the body, and one between the copy and the gemm.
// CHECK-LABEL: tile.kernel @loop
// CHECK:      tile.pipelined
// CHECK-NEXT:   tile.region
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.copy %{{.*}}, %b_s
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   tile.gemm %a_s, %b_s
// CHECK-NEXT: }
tile.kernel @loop(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  tile.pipelined %n = %c0 to %c4 stages 1 {
    %r = tile.region %X[%n, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %r, %b_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %a_s, %b_s -> %acc : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
}

// -----

// A store from scalar code into a shared tile, then a loop reading it: a barrier between them.
// CHECK-LABEL: tile.kernel @scalar
// CHECK:      memref.store
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.parallel
tile.kernel @scalar(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(64) as (%i) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %s = tile.alloc : memref<64xf32, #tile.space<shared>> loc("s")
  %f = tile.alloc {tile.layout = #tile.blocked<[64], vec 1>} : memref<64xf32, #tile.space<fragment>> loc("f")
  memref.store %one, %s[%c0] : memref<64xf32, #tile.space<shared>>
  tile.parallel (%k) in [64] {
    %v = memref.load %s[%c0] : memref<64xf32, #tile.space<shared>>
    memref.store %v, %f[%k] : memref<64xf32, #tile.space<fragment>>
  }
}

// -----

// tile.arrive_last synchronizes the block itself: the last block's read of the slices other threads (and blocks)
// stored needs no further barrier (there was one inside the loop before the pass knew it).
// CHECK-LABEL: tile.kernel @arrive
// CHECK:      tile.atomic_add
// CHECK-NEXT: tile.arrive_last
// CHECK-NEXT: scf.if
// CHECK-NOT:  tile.barrier
// CHECK:      tile.copy
tile.kernel @arrive(%P: memref<2x?xf32, #tile.space<global>>, %C: memref<?xi32, #tile.space<global>>)
    grid(%P[1]) ()[s0] -> (s0 ceildiv 64) threads(64) as (%i) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %i, %c64 : index
  %f = tile.alloc {tile.layout = #tile.blocked<[64], vec 1>} : memref<64xf32, #tile.space<fragment>> loc("f")
  %g = tile.alloc {tile.layout = #tile.blocked<[64], vec 1>} : memref<64xf32, #tile.space<fragment>> loc("g")
  %r = tile.region %P[%c0, %row] [1, 64] : memref<2x?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.atomic_add %f, %r exclusive write_once : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
  %last = tile.arrive_last %C[%i] of 1 : memref<?xi32, #tile.space<global>>
  scf.if %last {
    tile.copy %r, %g : !tile.region<64xf32, global>, memref<64xf32, #tile.space<fragment>>
  }
}

// -----

// tile.discard writes (indeterminate values into) its region: every thread's read of the slices comes first.
// CHECK-LABEL: tile.kernel @discard_after_read
// CHECK:      tile.copy
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.discard
tile.kernel @discard_after_read(%P: memref<?xf32, #tile.space<global>>)
    grid(%P[0]) ()[s0] -> (s0 ceildiv 64) threads(64) as (%i) {
  %c64 = arith.constant 64 : index
  %row = arith.muli %i, %c64 : index
  %g = tile.alloc {tile.layout = #tile.blocked<[64], vec 1>} : memref<64xf32, #tile.space<fragment>> loc("g")
  %r = tile.region %P[%row] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.copy %r, %g : !tile.region<64xf32, global>, memref<64xf32, #tile.space<fragment>>
  tile.discard %r : !tile.region<64xf32, global>
}
