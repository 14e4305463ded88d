// tile-shared-memory-budget: totals and the over-budget error.
// RUN: tile-opt %s -split-input-file -tile-shared-memory-budget -verify-diagnostics | FileCheck %s
// RUN: not tile-opt %s -split-input-file -tile-shared-memory-budget="limit=1024" 2>&1 | FileCheck %s --check-prefix=SMALL

// Two bf16 64x128 tiles (16 KiB each) and an f32 vector; fragments don't count.
// CHECK-LABEL: tile.kernel @fits
// CHECK-SAME:  tile.shared_bytes = 33024 : i64
tile.kernel @fits(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %k = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
  %v = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
  %l = tile.alloc : memref<64xf32, #tile.space<shared>>
  %acc = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
}
// SMALL: error: kernel 'fits' needs 33024 bytes of shared memory, more than the 1024 one block may use

// -----

// 4 x 64 KiB is over the sm_90 limit of 227 KiB.
// expected-error @+1 {{kernel 'too_big' needs 262144 bytes of shared memory, more than the 232448 one block may use}}
tile.kernel @too_big(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-note @+1 {{shared tile of 65536 bytes}}
  %a = tile.alloc : memref<128x128xf32, #tile.space<shared>>
  // expected-note @+1 {{shared tile of 65536 bytes}}
  %c = tile.alloc : memref<128x128xf32, #tile.space<shared>>
  // expected-note @+1 {{shared tile of 65536 bytes}}
  %d = tile.alloc : memref<128x128xf32, #tile.space<shared>>
  %e = tile.alloc : memref<128x128xf32, #tile.space<shared>>
}
