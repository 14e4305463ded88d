// tile-infer-layouts: fragment layouts from gemm accumulators, slices for reductions, loop layouts, register A
// operands, conversions through shared memory with a remark, and accesses no layout serves (errors at the op).
// RUN: tile-opt %s -split-input-file -tile-infer-layouts -verify-diagnostics | FileCheck %s

// A softmax-like chain: the accumulator feeds a register A operand, so warps take whole rows (4x1), the row vector
// is a slice of it, the loop runs where the accumulator lives, and p is read by the second gemm in registers.
// CHECK-LABEL: tile.kernel @rows
// CHECK: %x_s = tile.alloc : memref<64x64xbf16
// CHECK: %acc = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>}
// CHECK: %p = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>}
// CHECK: %out = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>}
// CHECK: %row_max = tile.alloc {tile.layout = #tile.slice<#tile.mma_c<[64, 64], warps [4, 1]>, dim 1>}
// CHECK: tile.gemm %x_s, %w_s -> %acc clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>}
// CHECK: tile.parallel (%{{.*}}, %{{.*}}) in [64, 64] attributes {tile.layout = #tile.mma_c<[64, 64], warps [4, 1]>}
// CHECK: tile.gemm %p, %w_s -> %out clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>}

#map = affine_map<()[s0] -> (s0, 64)>
#map1 = affine_map<()[s0] -> (64, 64)>
#map2 = affine_map<()[s0] -> (s0)>
module {
  tile.kernel @rows(%X: memref<?x64xbf16, #tile.space<global>>, %W: memref<64x64xbf16, #tile.space<global>>, %Y: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%i) attributes {constants = {n = 64 : i64}, tile.arg_names = ["X", "W", "Y"], tile.index_names = ["i"]} {
    %c64 = arith.constant 64 : index
    %c0 = arith.constant 0 : index
    %x_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("x_s")
    %w_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("w_s")
    %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>> loc("acc")
    %p = tile.alloc : memref<64x64xbf16, #tile.space<fragment>> loc("p")
    %out = tile.alloc : memref<64x64xf32, #tile.space<fragment>> loc("out")
    %row_max = tile.alloc : memref<64xf32, #tile.space<fragment>> loc("row_max")
    %0 = arith.muli %i, %c64 : index
    %1 = tile.region %X[%0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %1, %x_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    %2 = tile.region %W[%c0, %c0] [64, 64] : memref<64x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %2, %w_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %x_s, %w_s -> %acc clear : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
    tile.reduce max %acc -> %row_max dim 1 clear : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
    tile.parallel (%arg0, %arg1) in [64, 64] {
      %4 = memref.load %acc[%arg0, %arg1] : memref<64x64xf32, #tile.space<fragment>>
      %5 = memref.load %row_max[%arg0] : memref<64xf32, #tile.space<fragment>>
      %6 = arith.subf %4, %5 : f32
      %7 = math.exp2 %6 : f32
      memref.store %7, %acc[%arg0, %arg1] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.copy %acc, %p : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<fragment>>
    tile.gemm %p, %w_s -> %out clear : memref<64x64xbf16, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
    tile.reduce sum %out -> %row_max dim 1 clear : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
    %3 = tile.region %Y[%0] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
    tile.copy %row_max, %3 : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
  }
}


// -----

// full_col puts the accumulator's warps side by side (1x4): a warp holds a quarter of each row, but the register A
// operand needs whole rows (4x1), so p goes through a new shared tile.
// CHECK-LABEL: tile.kernel @rows
// CHECK: %p_staged = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
// CHECK: tile.gemm %x_s, %w_s -> %acc clear policy full_col {tile.mma = #tile.mma_sync<m16n8k16, warps [1, 4]>}
// CHECK: tile.copy %p, %p_staged
// CHECK-NEXT: tile.gemm %p_staged, %w_s -> %out clear {tile.mma = #tile.mma_sync<m16n8k16, warps [4, 1]>, tile.wgmma = #tile.wgmma<m64, n 64, k16>}
// The sum over out's rows (4x1) lands in row_max, laid out like acc's rows (1x4): reduce, then convert.
// CHECK-NEXT: tile.reduce sum %out -> %row_max_partial dim 1 clear
// CHECK-NEXT: tile.copy %row_max_partial, %row_max_partial_staged
// CHECK-NEXT: tile.copy %row_max_partial_staged, %row_max

#map = affine_map<()[s0] -> (s0, 64)>
#map1 = affine_map<()[s0] -> (64, 64)>
#map2 = affine_map<()[s0] -> (s0)>
module {
  tile.kernel @rows(%X: memref<?x64xbf16, #tile.space<global>>, %W: memref<64x64xbf16, #tile.space<global>>, %Y: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%i) attributes {constants = {n = 64 : i64}, tile.arg_names = ["X", "W", "Y"], tile.index_names = ["i"]} {
    %c64 = arith.constant 64 : index
    %c0 = arith.constant 0 : index
    %x_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("x_s")
    %w_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("w_s")
    %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>> loc("acc")
    %p = tile.alloc : memref<64x64xbf16, #tile.space<fragment>> loc("p")
    %out = tile.alloc : memref<64x64xf32, #tile.space<fragment>> loc("out")
    %row_max = tile.alloc : memref<64xf32, #tile.space<fragment>> loc("row_max")
    %0 = arith.muli %i, %c64 : index
    %1 = tile.region %X[%0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %1, %x_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    %2 = tile.region %W[%c0, %c0] [64, 64] : memref<64x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
    tile.copy %2, %w_s : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
    tile.gemm %x_s, %w_s -> %acc clear policy full_col : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
    tile.reduce max %acc -> %row_max dim 1 clear : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
    tile.parallel (%arg0, %arg1) in [64, 64] {
      %4 = memref.load %acc[%arg0, %arg1] : memref<64x64xf32, #tile.space<fragment>>
      %5 = memref.load %row_max[%arg0] : memref<64xf32, #tile.space<fragment>>
      %6 = arith.subf %4, %5 : f32
      %7 = math.exp2 %6 : f32
      memref.store %7, %acc[%arg0, %arg1] : memref<64x64xf32, #tile.space<fragment>>
    }
    tile.copy %acc, %p : memref<64x64xf32, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<fragment>>
    // expected-remark @below {{fragment 'p' (mma_c 64x64 warps 1x4) is not in the layout this gemm reads A in (mma_a 64x64 warps 4x1); it is staged through shared memory}}
    tile.gemm %p, %w_s -> %out clear : memref<64x64xbf16, #tile.space<fragment>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
    // expected-remark @below {{the target of this reduction is not in the reduction's layout (slice(mma_c 64x64 warps 4x1, dim 1)); it reduces into 'row_max_partial' and copies}}
    // expected-remark @below {{'row_max_partial' (slice(mma_c 64x64 warps 4x1, dim 1)) and 'row_max' (slice(mma_c 64x64 warps 1x4, dim 1)) are laid out differently; the copy goes through shared memory}}
    tile.reduce sum %out -> %row_max dim 1 clear : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
    %3 = tile.region %Y[%0] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
    tile.copy %row_max, %3 : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
  }
}

// -----

// A fragment read from scalar code is held whole by every thread; a loop spread over the threads by another
// fragment's layout writes it through a shared copy, copied in before the loop and back to every thread after it
// (a regression test: tile-infer-layouts once refused it, "writing it here is not supported yet").
// CHECK-LABEL: tile.kernel @mixed
// CHECK:       %t_staged = tile.alloc : memref<64xf32, #tile.space<shared>>
// CHECK:       %t = tile.alloc {tile.layout = #tile.replicated<[64]>}
// CHECK:       tile.copy %t, %t_staged
// CHECK-NEXT:  tile.parallel
// CHECK:         memref.store %{{.*}}, %t_staged[%{{.*}}] : memref<64xf32, #tile.space<shared>>
// CHECK:       tile.copy %t_staged, %t
// CHECK-NEXT:  memref.load %t[
tile.kernel @mixed(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  %c0 = arith.constant 0 : index
  %x_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>> loc("x_s")
  %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>> loc("acc")
  %t = tile.alloc : memref<64xf32, #tile.space<fragment>> loc("t")
  tile.gemm %x_s, %x_s -> %acc clear : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>, memref<64x64xf32, #tile.space<fragment>>
  // expected-remark @below {{'t' (replicated 64) is held whole by every thread, but this loop is spread over the threads and writes it; the loop (mma_c 64x64 warps 2x2) works on 't_staged' in shared memory, copied in before it and back after it}}
  tile.parallel (%r, %c) in [64, 64] {
    %v = memref.load %acc[%r, %c] : memref<64x64xf32, #tile.space<fragment>>
    memref.store %v, %t[%r] : memref<64xf32, #tile.space<fragment>>
  }
  %s = memref.load %t[%c0] : memref<64xf32, #tile.space<fragment>>
}

// -----

// Local tiles and fragments indexed by an expression are replicated; f32 operands run the gemm without tensor
// cores; a fragment no gemm or loop constrains gets a blocked layout of 16 bytes per thread.
// CHECK-LABEL: tile.kernel @odd
// CHECK: %a_s = tile.alloc : memref<16x16xf32
// CHECK: %c = tile.alloc {tile.layout = #tile.blocked<[16, 16], vec 4>}
// CHECK: %l = tile.alloc {tile.layout = #tile.replicated<[8]>}
// CHECK: %e = tile.alloc {tile.layout = #tile.replicated<[32]>}
// CHECK: tile.gemm %a_s, %a_s -> %c {tile.mma = #tile.simt}
// CHECK: tile.parallel (%{{.*}}) in [8] attributes {tile.layout = #tile.replicated<[8]>}
tile.kernel @odd(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(64) as (%i) {
  %c1 = arith.constant 1 : index
  %a_s = tile.alloc : memref<16x16xf32, #tile.space<shared>> loc("a_s")
  %c = tile.alloc : memref<16x16xf32, #tile.space<fragment>> loc("c")
  %l = tile.alloc : memref<8xf32, #tile.space<local>> loc("l")
  %e = tile.alloc : memref<32xf32, #tile.space<fragment>> loc("e")
  tile.gemm %a_s, %a_s -> %c : memref<16x16xf32, #tile.space<shared>>, memref<16x16xf32, #tile.space<shared>>, memref<16x16xf32, #tile.space<fragment>>
  tile.parallel (%k) in [8] {
    %k1 = arith.addi %k, %c1 : index
    %v = memref.load %e[%k1] : memref<32xf32, #tile.space<fragment>>
    memref.store %v, %l[%k] : memref<8xf32, #tile.space<local>>
  }
}

// -----

// Register tiles and parallel loops past what a block's registers could hold are refused before any layout question
// (answering them enumerates the elements: a loop of 2^38 iterations once took minutes here).
tile.kernel @huge(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%i) {
  // expected-error @below {{this register tile has 131072 elements; the GPU lowering holds register tiles in the threads' registers and supports at most 65536 per block}}
  %f = tile.alloc : memref<256x512xf32, #tile.space<fragment>>
  %g = tile.alloc : memref<64xf32, #tile.space<fragment>> loc("g")
  // expected-error @below {{this parallel loop has 274877906944 iterations; the GPU lowering spreads them over the block's threads and supports at most 131072}}
  tile.parallel (%r, %c) in [4294967296, 64] {
    %v = memref.load %g[%c] : memref<64xf32, #tile.space<fragment>>
  }
}
