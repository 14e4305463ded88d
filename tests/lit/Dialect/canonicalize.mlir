// Canonicalization patterns of the tile ops.
// RUN: tile-opt %s -split-input-file -canonicalize | FileCheck %s

// A copy of a tile onto itself is erased.
// CHECK-LABEL: tile.kernel @self_copy
// CHECK-NOT:   tile.copy
tile.kernel @self_copy(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %s = tile.alloc : memref<64xf32, #tile.space<shared>>
  tile.copy %s, %s : memref<64xf32, #tile.space<shared>>, memref<64xf32, #tile.space<shared>>
}

// -----

// A copy between two different tiles stays.
// CHECK-LABEL: tile.kernel @real_copy
// CHECK:       tile.copy
tile.kernel @real_copy(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %s = tile.alloc : memref<64xf32, #tile.space<shared>>
  %t = tile.alloc : memref<64xf32, #tile.space<fragment>>
  tile.copy %s, %t : memref<64xf32, #tile.space<shared>>, memref<64xf32, #tile.space<fragment>>
  %r = tile.region %A[%b] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.copy %t, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
}

// -----

// Of two fills in a row of the same tile only the second survives.
// CHECK-LABEL: tile.kernel @fill_fill
// CHECK:       %[[ONE:.*]] = arith.constant 1.0
// CHECK-NOT:   tile.fill
// CHECK:       tile.fill %{{.*}}, %[[ONE]]
// CHECK-NOT:   tile.fill
tile.kernel @fill_fill(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %t = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  tile.fill %t, %zero : memref<64xf32, #tile.space<fragment>>
  tile.fill %t, %one : memref<64xf32, #tile.space<fragment>>
  %r = tile.region %A[%b] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.copy %t, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
}

// -----

// Fills of different tiles, or separated by a use, both stay.
// CHECK-LABEL: tile.kernel @fill_use_fill
// CHECK-COUNT-3: tile.fill
tile.kernel @fill_use_fill(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %t = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %u = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %zero = arith.constant 0.0 : f32
  tile.fill %t, %zero : memref<64xf32, #tile.space<fragment>>
  tile.fill %u, %zero : memref<64xf32, #tile.space<fragment>>
  %r = tile.region %A[%b] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.copy %t, %r : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
  tile.fill %t, %zero : memref<64xf32, #tile.space<fragment>>
}

// -----

// A fill of an accumulator that a clearing gemm then overwrites is dead;
// without `clear` the gemm accumulates into it and the fill stays.
// CHECK-LABEL: tile.kernel @fill_then_gemm
// CHECK-NOT:   tile.fill
// CHECK:       tile.gemm {{.*}} clear
// CHECK:       tile.fill
// CHECK-NEXT:  tile.gemm
// CHECK-NOT:   clear
tile.kernel @fill_then_gemm(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %a = tile.alloc : memref<16x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<16x16xf32, #tile.space<fragment>>
  %zero = arith.constant 0.0 : f32
  tile.fill %c, %zero : memref<16x16xf32, #tile.space<fragment>>
  tile.gemm %a, %a -> %c clear : memref<16x16xbf16, #tile.space<shared>>, memref<16x16xbf16, #tile.space<shared>>, memref<16x16xf32, #tile.space<fragment>>
  tile.fill %c, %zero : memref<16x16xf32, #tile.space<fragment>>
  tile.gemm %a, %a -> %c : memref<16x16xbf16, #tile.space<shared>>, memref<16x16xbf16, #tile.space<shared>>, memref<16x16xf32, #tile.space<fragment>>
}
