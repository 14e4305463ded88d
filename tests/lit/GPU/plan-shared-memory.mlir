// tile-plan-shared-memory: offsets in one dynamic buffer, reuse by liveness, swizzles by row width, reduction
// scratch, the budget.
// RUN: tile-opt %s -split-input-file -tile-plan-shared-memory -verify-diagnostics | FileCheck %s

// a_s and b_s are used together; c_s and v_s only after both are dead, so
// they reuse their bytes. Rows of 256 bytes swizzle with xor8, of 64 bytes with xor4/2, 1-d tiles not at all.
// CHECK-LABEL: tile.kernel @reuse
// CHECK-SAME: tile.scratch_offset = -1 : i64, tile.shared_bytes = 32768 : i64
// CHECK: %a_s = tile.alloc {tile.offset = 0 : i64, tile.swizzle = #tile.swizzle<xor8>} : memref<64x128xbf16
// CHECK: %b_s = tile.alloc {tile.offset = 16384 : i64, tile.swizzle = #tile.swizzle<xor8>} : memref<64x128xbf16
// CHECK: %c_s = tile.alloc {tile.offset = 0 : i64, tile.swizzle = #tile.swizzle<xor4_rows2>} : memref<64x32xbf16
// CHECK: %v_s = tile.alloc {tile.offset = 4096 : i64, tile.swizzle = #tile.swizzle<none>} : memref<64xbf16
tile.kernel @reuse(%X: memref<?x128xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc : memref<64x128xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x128xbf16, #tile.space<shared>> loc("b_s")
  %c_s = tile.alloc : memref<64x32xbf16, #tile.space<shared>> loc("c_s")
  %v_s = tile.alloc : memref<64xbf16, #tile.space<shared>> loc("v_s")
  %r = tile.region %X[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  tile.copy %r, %a_s : !tile.region<64x128xbf16, global>, memref<64x128xbf16, #tile.space<shared>>
  tile.copy %a_s, %b_s : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>
  tile.copy %b_s, %r : memref<64x128xbf16, #tile.space<shared>>, !tile.region<64x128xbf16, global>
  %r2 = tile.region %X[%c0, %c0] [64, 32] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x32xbf16, global>
  tile.copy %r2, %c_s : !tile.region<64x32xbf16, global>, memref<64x32xbf16, #tile.space<shared>>
  tile.reduce sum %c_s -> %v_s dim 1 clear : memref<64x32xbf16, #tile.space<shared>> -> memref<64xbf16, #tile.space<shared>>
}

// -----

// A tile used inside a loop lives for the whole loop: nothing used in the loop shares its bytes. A reduction whose
// source spreads the reduced dim over warps (mma_c warps 2x2) gets scratch after the tiles.
// CHECK-LABEL: tile.kernel @loop
// CHECK-SAME: tile.scratch_offset = 16384 : i64, tile.shared_bytes = 16896 : i64
// CHECK: %a_s = tile.alloc {tile.offset = 0 : i64
// CHECK: %b_s = tile.alloc {tile.offset = 8192 : i64
tile.kernel @loop(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("a_s")
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("b_s")
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [2, 2]>} : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %rows = tile.alloc {tile.layout = #tile.slice<#tile.mma_c<[64, 64], warps [2, 2]>, dim 1>} : memref<64xf32, #tile.space<fragment>> loc("rows")
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  tile.pipelined %n = %c0 to %c4 stages 1 {
    tile.copy %r, %b_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %a_s, %b_s -> %acc clear : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  }
  tile.reduce max %acc -> %rows dim 1 clear : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
}

// -----

// expected-error @below {{kernel 'big' needs 262144 bytes of shared memory after planning, more than the 232448 one block may use}}
tile.kernel @big(%X: memref<?x128xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  // expected-note @below {{shared tile of 131072 bytes at offset 0}}
  %a_s = tile.alloc : memref<512x128xbf16, #tile.space<shared>>
  // expected-note @below {{shared tile of 131072 bytes at offset 131072}}
  %b_s = tile.alloc : memref<512x128xbf16, #tile.space<shared>>
  tile.copy %a_s, %b_s : memref<512x128xbf16, #tile.space<shared>>, memref<512x128xbf16, #tile.space<shared>>
}
