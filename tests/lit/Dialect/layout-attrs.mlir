// The attributes of the GPU lowering's decisions parse, print and parse again, through the custom and the generic
// form: fragment layouts (`tile.layout` on register tiles and parallel loops), gemm plans (`tile.mma`, `tile.wgmma`),
// swizzles (`tile.swizzle`), copy plans (`tile.copy_plan`) and the integer and unit attributes beside them.
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// CHECK-LABEL: tile.kernel @layouts(
tile.kernel @layouts(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // CHECK: tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>>
  %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>} : memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.layout = #tile.mma_a<[64, 32], warps [2, 2]>} : memref<64x32xbf16, #tile.space<fragment>>
  %a = tile.alloc {tile.layout = #tile.mma_a<[64, 32], warps [2, 2]>} : memref<64x32xbf16, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.layout = #tile.slice<#tile.mma_c<[64, 64], warps [4, 1]>, dim 1>} : memref<64xf32, #tile.space<fragment>>
  %rows = tile.alloc {tile.layout = #tile.slice<#tile.mma_c<[64, 64], warps [4, 1]>, dim 1>} : memref<64xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.layout = #tile.slice<#tile.slice<#tile.blocked<[4, 8, 16], vec 4>, dim 2>, dim 0>} : memref<8xf32, #tile.space<fragment>>
  %s = tile.alloc {tile.layout = #tile.slice<#tile.slice<#tile.blocked<[4, 8, 16], vec 4>, dim 2>, dim 0>} : memref<8xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.layout = #tile.replicated<[3, 5]>} : memref<3x5xi32, #tile.space<local>>
  %l = tile.alloc {tile.layout = #tile.replicated<[3, 5]>} : memref<3x5xi32, #tile.space<local>>
  // CHECK: tile.alloc {tile.layout = #tile.replicated<[]>} : memref<f32, #tile.space<local>>
  %r = tile.alloc {tile.layout = #tile.replicated<[]>} : memref<f32, #tile.space<local>>
  // CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [64, 64] attributes {tile.layout = #tile.blocked<[64, 64], vec 1>} {
  tile.parallel (%i, %j) in [64, 64] attributes {tile.layout = #tile.blocked<[64, 64], vec 1>} {
  }
  // CHECK: tile.parallel (%{{.*}}) in [4] attributes {tile.layout = #tile.blocked<[4], vec 1>, tile.primary_only} {
  tile.parallel (%i) in [4] attributes {tile.layout = #tile.blocked<[4], vec 1>, tile.primary_only} {
  }
  // CHECK: tile.alloc {tile.offset = 0 : i64, tile.stage_bytes = 16384 : i64, tile.stages = 2 : i64, tile.swizzle = #tile.swizzle<xor8_panels>} : memref<64x128xbf16, #tile.space<shared>>
  %k_s = tile.alloc {tile.offset = 0 : i64, tile.stage_bytes = 16384 : i64, tile.stages = 2 : i64, tile.swizzle = #tile.swizzle<xor8_panels>} : memref<64x128xbf16, #tile.space<shared>>
  // CHECK: tile.alloc {tile.offset = 32768 : i64, tile.swizzle = #tile.swizzle<xor4_rows2>} : memref<64x32xf16, #tile.space<shared>>
  %h_s = tile.alloc {tile.offset = 32768 : i64, tile.swizzle = #tile.swizzle<xor4_rows2>} : memref<64x32xf16, #tile.space<shared>>
  // CHECK: tile.gemm %{{.*}}, %{{.*}} -> %{{.*}} transpose_b clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>}
  tile.gemm %k_s, %k_s -> %acc transpose_b clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>} : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.gemm %{{.*}}, %{{.*}} -> %{{.*}} clear {tile.mma = #tile.simt}
  tile.gemm %h_s, %h_s -> %acc transpose_b clear {tile.mma = #tile.simt} : memref<64x32xf16, #tile.space<shared>>, memref<64x32xf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.copy %{{.*}}, %{{.*}} {tile.copy_plan = #tile.copy<elementwise>}
  tile.copy %acc, %acc {tile.copy_plan = #tile.copy<elementwise>} : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.copy %{{.*}}, %{{.*}} {tile.copy_plan = #tile.copy<row_chunks, vec 8, checked>}
  tile.copy %k_s, %k_s {tile.copy_plan = #tile.copy<row_chunks, vec 8, checked>} : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>
  // CHECK: tile.copy %{{.*}}, %{{.*}} {tile.copy_plan = #tile.copy<chunks, vec 4>}
  tile.copy %k_s, %k_s {tile.copy_plan = #tile.copy<chunks, vec 4>} : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>
  // CHECK: tile.copy %{{.*}}, %{{.*}} {tile.copy_plan = #tile.copy<fragment_vectors, vec 2>}
  tile.copy %acc, %acc {tile.copy_plan = #tile.copy<fragment_vectors, vec 2>} : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.copy %{{.*}}, %{{.*}} {tile.copy_plan = #tile.copy<packed_pairs, vec 2, lane_index>}
  tile.copy %acc, %acc {tile.copy_plan = #tile.copy<packed_pairs, vec 2, lane_index>} : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.atomic_plan = #tile.atomic<exclusive_rmw, vec 2, checked>}
  %ap = tile.alloc {tile.atomic_plan = #tile.atomic<exclusive_rmw, vec 2, checked>} : memref<4xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.atomic_plan = #tile.atomic<vectors, vec 4>}
  %aq = tile.alloc {tile.atomic_plan = #tile.atomic<vectors, vec 4>} : memref<4xf32, #tile.space<fragment>>
  // CHECK: tile.alloc {tile.atomic_plan = #tile.atomic<elementwise>}
  %ar = tile.alloc {tile.atomic_plan = #tile.atomic<elementwise>} : memref<4xf32, #tile.space<fragment>>
}
