// Every tile op parses, prints and parses again, through the custom syntax
// and through the generic form (custom -> generic -> custom).
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// CHECK-LABEL: tile.kernel @all_ops(
// CHECK-SAME:    %[[X:.*]]: memref<?x?x128xbf16, #tile.space<global>>,
// CHECK-SAME:    %[[Y:.*]]: memref<?x128xf32, #tile.space<global>>,
// CHECK-SAME:    %[[N:.*]]: i32)
// CHECK-SAME:  grid(%[[X]][1], %[[X]][0]) ()[s0, s1] -> (s0 ceildiv 64, s1)
// CHECK-SAME:  threads(128) as (%[[BX:.*]], %[[BY:.*]])
// CHECK-SAME:  attributes {constants = {block = 64 : i64}}
tile.kernel @all_ops(%X: memref<?x?x128xbf16, #tile.space<global>>,
                     %Y: memref<?x128xf32, #tile.space<global>>, %n: i32)
    grid(%X[1], %X[0]) ()[s0, s1] -> (s0 ceildiv 64, s1) threads(128)
    as (%bx, %by) attributes {constants = {block = 64 : i64}} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %bx, %c64 : index
  // CHECK: %[[XS:.*]] = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
  %xs = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
  // CHECK: %[[ACC:.*]] = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  // CHECK: %[[ROWMAX:.*]] = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %rowmax = tile.alloc : memref<64xf32, #tile.space<fragment>>
  // CHECK: %[[P:.*]] = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  %p = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  // CHECK: %[[LOC:.*]] = tile.alloc : memref<8xf32, #tile.space<local>>
  %loc = tile.alloc : memref<8xf32, #tile.space<local>>
  // CHECK: %[[XR:.*]] = tile.region %[[X]][%[[BY]], %{{.*}}, %{{.*}}] [1, 64, 128] : memref<?x?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  %xr = tile.region %X[%by, %row, %c0] [1, 64, 128]
      : memref<?x?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  // CHECK: tile.region %[[X]]{{.*}} [1, 1, 128] pad(0xFFF0000000000000) : {{.*}} -> !tile.region<128xbf16, global>
  %xrow = tile.region %X[%by, %row, %c0] [1, 1, 128] pad(0xFFF0000000000000)
      : memref<?x?x128xbf16, #tile.space<global>> -> !tile.region<128xbf16, global>
  // CHECK: tile.copy %[[XR]], %[[XS]] : !tile.region<64x128xbf16, global>, memref<64x128xbf16, #tile.space<shared>>
  tile.copy %xr, %xs : !tile.region<64x128xbf16, global>, memref<64x128xbf16, #tile.space<shared>>
  %zero = arith.constant 0.0 : f32
  // CHECK: tile.fill %[[ACC]], %{{.*}} : memref<64x64xf32, #tile.space<fragment>>
  tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>
  // CHECK-NEXT: tile.barrier
  tile.barrier
  // CHECK: tile.gemm %[[XS]], %[[XS]] -> %[[ACC]] transpose_b clear policy full_row :
  tile.gemm %xs, %xs -> %acc transpose_b clear policy full_row
      : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>,
        memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.wgmma_wait pending 1 (%[[ACC]]) : memref<64x64xf32, #tile.space<fragment>>
  tile.wgmma_wait pending 1 (%acc) : memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.wgmma_wait pending 0{{$}}
  tile.wgmma_wait pending 0
  // CHECK: tile.reduce max %[[ACC]] -> %[[ROWMAX]] dim 1 clear :
  tile.reduce max %acc -> %rowmax dim 1 clear
      : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
  // CHECK: tile.reduce sum %[[ACC]] -> %[[ROWMAX]] dim 0 :
  tile.reduce sum %acc -> %rowmax dim 0
      : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
  // CHECK: tile.parallel (%[[I:.*]], %[[J:.*]]) in [64, 64] {
  // CHECK:   memref.load %[[ACC]][%[[I]], %[[J]]]
  // CHECK:   math.exp2
  // CHECK:   memref.store
  // CHECK: }
  tile.parallel (%i, %j) in [64, 64] {
    %s = memref.load %acc[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    %e = math.exp2 %s : f32
    %b = arith.truncf %e : f32 to bf16
    memref.store %b, %p[%i, %j] : memref<64x64xbf16, #tile.space<fragment>>
  }
  // CHECK: %[[XS64:.*]] = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  // CHECK: tile.gemm %[[P]], %[[XS64]] -> %[[ACC]] :
  %xs64 = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  tile.gemm %p, %xs64 -> %acc
      : memref<64x64xbf16, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>,
        memref<64x64xf32, #tile.space<fragment>>
  // CHECK: tile.pipelined %[[K:.*]] = %{{.*}} to %{{.*}} stages 3 {
  // CHECK:   tile.region %[[Y]][%[[K]], %{{.*}}] [64, 64]
  // CHECK:   tile.atomic_add %[[ACC]], %{{.*}} :
  // CHECK: }
  tile.pipelined %k = %c0 to %c4 stages 3 {
    %yr = tile.region %Y[%k, %c0] [64, 64]
        : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x64xf32, global>
    tile.atomic_add %acc, %yr
        : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xf32, global>
  }
  // CHECK: tile.atomic_add %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] order(seq_cst) : f32, memref<?x128xf32, #tile.space<global>>
  %one = arith.constant 1.0 : f32
  tile.atomic_add %one, %Y[%row, %c0] order(seq_cst) : f32, memref<?x128xf32, #tile.space<global>>
  // CHECK: tile.atomic_add %{{.*}}, %[[XR]] : memref<64x128xbf16, #tile.space<shared>>, !tile.region<64x128xbf16, global>
  tile.atomic_add %xs, %xr : memref<64x128xbf16, #tile.space<shared>>, !tile.region<64x128xbf16, global>
  // The promises tile-legalize-atomics makes: exclusive, and write_once with it.
  // CHECK: tile.atomic_add %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] exclusive : f32, memref<?x128xf32, #tile.space<global>>
  tile.atomic_add %one, %Y[%row, %c0] exclusive : f32, memref<?x128xf32, #tile.space<global>>
  // CHECK: tile.atomic_add %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] exclusive write_once : f32, memref<?x128xf32, #tile.space<global>>
  tile.atomic_add %one, %Y[%row, %c0] exclusive write_once : f32, memref<?x128xf32, #tile.space<global>>
  // atomic_rmw: both combiners, both forms, an order.
  // CHECK: tile.atomic_rmw max %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] : f32, memref<?x128xf32, #tile.space<global>>
  tile.atomic_rmw max %one, %Y[%row, %c0] : f32, memref<?x128xf32, #tile.space<global>>
  // CHECK: tile.atomic_rmw min %[[ACC]], %{{.*}} order(release) : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
  %xr64 = tile.region %X[%by, %row, %c0] [1, 64, 64]
      : memref<?x?x128xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  tile.atomic_rmw min %acc, %xr64 order(release)
      : memref<64x64xf32, #tile.space<fragment>>, !tile.region<64x64xbf16, global>
}

// A kernel with a single grid extent and nothing in it.
// CHECK-LABEL: tile.kernel @empty(
// CHECK-SAME: grid(%{{.*}}[0]) ()[s0] -> (s0) threads(32) as (%{{.*}}) {
tile.kernel @empty(%A: memref<?xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
}

// Regions of shared tiles, and a bf16 atomic into a shared tile.
// CHECK-LABEL: tile.kernel @shared_regions
// CHECK: tile.region %{{.*}}[%{{.*}}] [16] : memref<64xf32, #tile.space<shared>> -> !tile.region<16xf32, shared>
tile.kernel @shared_regions(%A: memref<?xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0 floordiv 4 + 1) threads(64) as (%b) {
  %s = tile.alloc : memref<64xf32, #tile.space<shared>>
  %r = tile.region %s[%b] [16] : memref<64xf32, #tile.space<shared>> -> !tile.region<16xf32, shared>
  %f = tile.alloc : memref<16xf32, #tile.space<fragment>>
  tile.copy %r, %f : !tile.region<16xf32, shared>, memref<16xf32, #tile.space<fragment>>
}

// The split strategy's arrival counter: the last of 4 blocks sums.
// CHECK-LABEL: tile.kernel @arrivals
// CHECK: %[[LAST:.*]] = tile.arrive_last %{{.*}}[%{{.*}}] of 4 : memref<?xi32, #tile.space<global>>
// CHECK: scf.if %[[LAST]]
tile.kernel @arrivals(%A: memref<?xf32, #tile.space<global>>, %C: memref<?xi32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(64) as (%b) {
  %c4 = arith.constant 4 : index
  %tile = arith.floordivsi %b, %c4 : index
  %last = tile.arrive_last %C[%tile] of 4 : memref<?xi32, #tile.space<global>>
  scf.if %last {
    %one = arith.constant 1.0 : f32
    tile.atomic_add %one, %A[%tile] exclusive : f32, memref<?xf32, #tile.space<global>>
  }
}

// Dead slices dropped from the cache.
// CHECK-LABEL: tile.kernel @discards
// CHECK: tile.discard %{{.*}} : !tile.region<4x64xf32, global>
tile.kernel @discards(%P: memref<4x?xf32, #tile.space<global>>)
    grid(%P[1]) ()[s0] -> (s0 ceildiv 64) threads(64) as (%b) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %col = arith.muli %b, %c64 : index
  %r = tile.region %P[%c0, %col] [4, 64] : memref<4x?xf32, #tile.space<global>> -> !tile.region<4x64xf32, global>
  tile.discard %r : !tile.region<4x64xf32, global>
}

// The asynchronous copies of an expanded software pipeline (tile-expand-pipelines).
// CHECK-LABEL: tile.kernel @async_copies(
tile.kernel @async_copies(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[A:.*]] = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %a_s = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // CHECK: %[[V:.*]] = tile.stage_view %[[A]][%{{.*}}] : memref<64x64xbf16, #tile.space<shared>>
  %v = tile.stage_view %a_s[%c1] : memref<64x64xbf16, #tile.space<shared>>
  // CHECK-NEXT: tile.async_copy %{{.*}}, %[[V]] : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  tile.async_copy %r, %v : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
  // CHECK-NEXT: tile.async_commit
  tile.async_commit
  // CHECK-NEXT: tile.async_wait pending 1
  tile.async_wait pending 1
  // CHECK-NEXT: tile.async_wait pending 0
  tile.async_wait pending 0
}

