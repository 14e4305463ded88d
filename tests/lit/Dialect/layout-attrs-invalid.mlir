// Every verifier rule of the fragment layout attributes and of the `tile.*` attributes on ops, one case per rule,
// with the exact message.
// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{the extents of a layout's shape must be positive, got 0}}
#l = #tile.replicated<[4, 0]>
tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %t = tile.alloc {tile.layout = #l} : memref<4x1xf32, #tile.space<local>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // A blocked layout's shape is never empty (the verifier refuses one built in C++; the parser takes none).
  // expected-error @+2 {{expected integer value}}
  // expected-error @+1 {{failed to parse Tile_BlockedLayoutAttr parameter 'shape'}}
  %t = tile.alloc {tile.layout = #tile.blocked<[], vec 1>} : memref<f32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a blocked layout's vector must be positive, got 0}}
  %t = tile.alloc {tile.layout = #tile.blocked<[64], vec 0>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{an mma layout's shape has rank 2, got rank 1}}
  %t = tile.alloc {tile.layout = #tile.mma_c<[64], warps [4, 1]>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{an mma layout's warps must be positive, got [0, 1]}}
  %t = tile.alloc {tile.layout = #tile.mma_c<[64, 64], warps [0, 1]>} : memref<64x64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{tile 24x64 does not split into m16n8k16 atoms over warps [4, 1]}}
  %t = tile.alloc {tile.layout = #tile.mma_c<[24, 64], warps [4, 1]>} : memref<24x64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{tile 64x24 does not split into m16n8k16 atoms over warps [4, 1]}}
  %t = tile.alloc {tile.layout = #tile.mma_a<[64, 24], warps [4, 1]>} : memref<64x24xbf16, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a slice's parent must be a fragment layout attribute, got 3 : i64}}
  %t = tile.alloc {tile.layout = #tile.slice<3, dim 0>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{slice dim 2 is out of range for a layout of rank 2}}
  %t = tile.alloc {tile.layout = #tile.slice<#tile.blocked<[4, 4], vec 1>, dim 2>} : memref<4xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.layout' must be a fragment layout (#tile.replicated, #tile.blocked, #tile.mma_c, #tile.mma_a or #tile.slice), got "blocked 64 vec 4"}}
  %t = tile.alloc {tile.layout = "blocked 64 vec 4"} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.layout' lays out shape [64, 64], but the tile has shape [64]}}
  %t = tile.alloc {tile.layout = #tile.blocked<[64, 64], vec 4>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.parallel' op 'tile.layout' lays out shape [8], but the loop has shape [16]}}
  tile.parallel (%i) in [16] attributes {tile.layout = #tile.blocked<[8], vec 1>} {
  }
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'arith.addi' op 'tile.layout' belongs on a tile.alloc or a tile.parallel}}
  %c1 = arith.addi %c0, %c0 {tile.layout = #tile.blocked<[8], vec 1>} : index
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.primary_only' belongs on a tile.parallel}}
  %t = tile.alloc {tile.primary_only} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.parallel' op 'tile.primary_only' must be a unit attribute, got 1 : i64}}
  tile.parallel (%i) in [16] attributes {tile.primary_only = 1 : i64} {
  }
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op unknown attribute 'tile.layuot' of the tile dialect}}
  %t = tile.alloc {tile.layuot = #tile.blocked<[64], vec 4>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a gemm's warps must be positive, got [0, 4]}}
  %t = tile.alloc {tile.mma = #tile.mma_sync<m16n8k16, warps [0, 4]>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{wgmma's N is a multiple of 8 from 8 to 256, got 12}}
  %t = tile.alloc {tile.wgmma = #tile.wgmma<m64, n 12, k16>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.mma' must be #tile.mma_sync<...> or #tile.simt, got "m16n8k16 warps 4x1"}}
  %t = tile.alloc {tile.mma = "m16n8k16 warps 4x1"} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.wgmma' must be #tile.wgmma<...>, got "m64n64k16"}}
  %t = tile.alloc {tile.wgmma = "m64n64k16"} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.swizzle' must be #tile.swizzle<...>, got "xor8"}}
  %t = tile.alloc {tile.offset = 0 : i64, tile.swizzle = "xor8"} : memref<64x64xf32, #tile.space<shared>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.offset' must be an integer, got "0"}}
  %t = tile.alloc {tile.offset = "0"} : memref<64x64xf32, #tile.space<shared>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.prefetch' must be a unit attribute, got true}}
  %t = tile.alloc {tile.prefetch = true} : memref<64x64xf32, #tile.space<shared>>
}

// -----

// expected-error @+1 {{'tile.kernel' op 'tile.arg_names' must be an array of strings, got [1]}}
tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) attributes {tile.arg_names = [1]} {
}

// -----

// expected-error @+1 {{'tile.kernel' op 'tile.arg_shapes' must be an array of affine maps, got ["X"]}}
tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) attributes {tile.arg_shapes = ["X"]} {
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{unknown copy kind 'tma' (expected elementwise, chunks, row_chunks, fragment_vectors or packed_pairs)}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<tma>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{expected 'vec N', 'checked' or 'lane_index'}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<chunks, width 8>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a copy's elements per access are a power of two from 1 to 16, got 6}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<chunks, vec 6>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{an elementwise copy moves one element per access, got vec 4}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<elementwise, vec 4>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a packed_pairs copy stores two elements per access, got vec 4}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<packed_pairs, vec 4>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{only a vector copy (chunks, row_chunks, fragment_vectors) has a run-time check}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<packed_pairs, vec 2, checked>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{lane_index applies to packed_pairs copies only}}
  %t = tile.alloc {tile.copy_plan = #tile.copy<fragment_vectors, vec 4, lane_index>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.copy_plan' must be #tile.copy<...>, got "vector 8"}}
  %t = tile.alloc {tile.copy_plan = "vector 8"} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{unknown atomic kind 'cas' (expected elementwise, exclusive_rmw or vectors)}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<cas>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{expected 'vec N' or 'checked'}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<vectors, lane_index>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{an atomic's elements per access are a power of two from 1 to 16, got 3}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<exclusive_rmw, vec 3>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{an elementwise atomic updates one element per access (no vec, no check)}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<elementwise, vec 2>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{vector reductions take 2 or 4 elements, got vec 8}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<vectors, vec 8>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{a run-time check guards a vector form (vec > 1)}}
  %t = tile.alloc {tile.atomic_plan = #tile.atomic<exclusive_rmw, checked>} : memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.alloc' op 'tile.atomic_plan' must be #tile.atomic<...>, got #tile.copy<elementwise>}}
  %t = tile.alloc {tile.atomic_plan = #tile.copy<elementwise>} : memref<64xf32, #tile.space<fragment>>
}
