// Every verifier rule of the tile dialect, one case per rule, with the exact message.
// RUN: tile-opt %s -split-input-file -verify-diagnostics

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.alloc' op cannot allocate in global memory; global tensors are kernel arguments}}
  %t = tile.alloc : memref<64xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.alloc' op result must be in a #tile.space memory space, got 'memref<64xf32>'}}
  %t = tile.alloc : memref<64xf32>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.alloc' op element type must be an integer or float, got 'index'}}
  %t = tile.alloc : memref<4xindex, #tile.space<shared>>
}

// -----

func.func @f() {
  // expected-error @+1 {{'tile.alloc' op allocates a fragment tile outside a tile.kernel}}
  %t = tile.alloc : memref<16xf32, #tile.space<fragment>>
  return
}

// -----

func.func @g(%t: memref<16xf32, #tile.space<fragment>>, %s: memref<16xf32, #tile.space<shared>>) {
  // expected-error @+1 {{'tile.copy' op source is a fragment tile used outside a tile.kernel}}
  tile.copy %t, %s : memref<16xf32, #tile.space<fragment>>, memref<16xf32, #tile.space<shared>>
  return
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op expects one offset per dimension of the source (2), got 1}}
  %r = tile.region %A[%c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op expects one size per dimension of the source (2), got 1}}
  %r = tile.region %A[%c0, %c0] [64] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64xbf16, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op size of dimension 0 must be positive, got 0}}
  %r = tile.region %A[%c0, %c0] [0, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<128xbf16, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op result shape 1x128 must be the sizes with unit dimensions dropped (128)}}
  %r = tile.region %A[%c0, %c0] [1, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<1x128xbf16, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op result element type 'f32' differs from the source's 'bf16'}}
  %r = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.region' op result memory space shared differs from the source's}}
  %r = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, shared>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %l = tile.alloc : memref<8xf32, #tile.space<local>>
  // expected-error @+1 {{'tile.region' op source must be global or shared or fragment, got 8xf32 (local)}}
  %r = tile.region %l[%c0] [4] : memref<8xf32, #tile.space<local>> -> !tile.region<4xf32, fragment>
}

// -----

// expected-error @+1 {{region extents must be positive, got 0}}
func.func private @h(!tile.region<0xf32, global>)

// -----

// expected-error @+1 {{regions view global, shared or fragment buffers, not local arrays}}
func.func private @h(!tile.region<4xf32, local>)

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  %r = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  // expected-error @+1 {{'tile.copy' op source 64x128xbf16 (global) and target 64x64xbf16 (shared) have different extents (64x128 vs 64x64 with unit dimensions dropped)}}
  tile.copy %r, %s : !tile.region<64x128xbf16, global>, memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %r = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  %q = tile.region %F[%c0, %c0] [64, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  // expected-error @+1 {{'tile.copy' op copies between two global buffers; stage the data through a shared tile or fragment}}
  tile.copy %r, %q : !tile.region<64x128xbf16, global>, !tile.region<64x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.copy' op source ?x128xbf16 (global) and target 64x128xbf16 (shared) have different extents}}
  tile.copy %A, %s : memref<?x128xbf16, #tile.space<global>>, memref<64x128xbf16, #tile.space<shared>>
}

// -----

tile.kernel @k(%A: memref<128xbf16, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %s = tile.alloc : memref<128xbf16, #tile.space<shared>>
  %t = tile.alloc : memref<128xi1, #tile.space<shared>>
  tile.copy %A, %s : memref<128xbf16, #tile.space<global>>, memref<128xbf16, #tile.space<shared>>
  %m = memref.alloca() : memref<128xf32>
  // expected-error @+1 {{'tile.copy' op target must be in a #tile.space memory space, got 'memref<128xf32>'}}
  tile.copy %s, %m : memref<128xbf16, #tile.space<shared>>, memref<128xf32>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 0.0 : bf16
  // expected-error @+1 {{'tile.fill' op fills a target of dynamic shape ?x128xbf16 (global); fill a static-shape region of it}}
  tile.fill %A, %f : memref<?x128xbf16, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<16xf32, #tile.space<fragment>>
  %f = arith.constant 0.0 : bf16
  // expected-error @+1 {{'tile.fill' op failed to verify that value has the target's element type}}
  "tile.fill"(%t, %f) : (memref<16xf32, #tile.space<fragment>>, bf16) -> ()
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %bad = tile.alloc : memref<32x16xbf16, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op operand B must be shared, got 32x16xbf16 (fragment)}}
  tile.gemm %a, %bad -> %c : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<fragment>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %cs = tile.alloc : memref<64x16xf32, #tile.space<shared>>
  // expected-error @+1 {{'tile.gemm' op accumulator C must be fragment, got 64x16xf32 (shared)}}
  tile.gemm %a, %bb -> %cs : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<shared>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %al = tile.alloc : memref<64x32xbf16, #tile.space<local>>
  // expected-error @+1 {{'tile.gemm' op operand A must be shared or fragment, got 64x32xbf16 (local)}}
  tile.gemm %al, %bb -> %c : memref<64x32xbf16, #tile.space<local>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %af = tile.alloc : memref<32x64xbf16, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op operand A is a register fragment and cannot be transposed; put it in a shared tile}}
  tile.gemm %af, %bb -> %c transpose_a : memref<32x64xbf16, #tile.space<fragment>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op reduction extents differ: op(A) is 64x32 and op(B) is 16x32}}
  tile.gemm %a, %bb -> %c transpose_b : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %c2 = tile.alloc : memref<64x32xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op accumulator C is 64x32 but op(A)·op(B) is 64x16}}
  tile.gemm %a, %bb -> %c2 : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x32xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %b16 = tile.alloc : memref<32x16xf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.gemm' op operands A and B have different element types ('bf16' vs 'f16')}}
  tile.gemm %a, %b16 -> %c : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xi8, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xi8, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op operand element type must be bf16, f16 or f32, got 'i8'}}
  tile.gemm %a, %bb -> %c : memref<64x32xi8, #tile.space<shared>>, memref<32x16xi8, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %ch = tile.alloc : memref<64x16xbf16, #tile.space<fragment>>
  // expected-error @+1 {{'tile.gemm' op accumulator C must be f32, got 'bf16'}}
  tile.gemm %a, %bb -> %ch : memref<64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xbf16, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a = tile.alloc : memref<64x32xbf16, #tile.space<shared>>
  %bb = tile.alloc : memref<32x16xbf16, #tile.space<shared>>
  %c = tile.alloc : memref<64x16xf32, #tile.space<fragment>>
  %a3 = tile.alloc : memref<2x64x32xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.gemm' op operand A must be a 2-d tile, got 2x64x32xbf16 (shared)}}
  tile.gemm %a3, %bb -> %c : memref<2x64x32xbf16, #tile.space<shared>>, memref<32x16xbf16, #tile.space<shared>>, memref<64x16xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x32xf32, #tile.space<fragment>>
  %r = tile.alloc : memref<64xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.reduce' op reduction dim 2 is out of range for a 2-d source}}
  tile.reduce sum %s -> %r dim 2 : memref<64x32xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x32xf32, #tile.space<fragment>>
  %r = tile.alloc : memref<64xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.reduce' op target is 64 but reducing dim 0 of 64x32 gives 32}}
  tile.reduce sum %s -> %r dim 0 : memref<64x32xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x32xf32, #tile.space<fragment>>
  %r = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %rh = tile.alloc : memref<64xf16, #tile.space<fragment>>
  // expected-error @+1 {{'tile.reduce' op source and target element types differ ('f32' vs 'f16')}}
  tile.reduce max %s -> %rh dim 1 : memref<64x32xf32, #tile.space<fragment>> -> memref<64xf16, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %r = tile.alloc : memref<64xbf16, #tile.space<fragment>>
  %g = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
  // expected-error @+1 {{'tile.reduce' op source must be shared or fragment or local, got 64x128xbf16 (global)}}
  tile.reduce min %g -> %r dim 1 : !tile.region<64x128xbf16, global> -> memref<64xbf16, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : memref<64x32xf32, #tile.space<fragment>>
  %r = tile.alloc : memref<64xf32, #tile.space<fragment>>
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min]}}
  tile.reduce prod %s -> %r dim 1 : memref<64x32xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'tile.atomic_add' op expects 2 indices for a 2-d destination, got 1}}
  tile.atomic_add %v, %F[%c0] : f32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'tile.atomic_add' op is 'write_once' but not 'exclusive'}}
  tile.atomic_add %v, %F[%c0, %c0] write_once : f32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'tile.atomic_add' op adds the scalar 'f32' without indices; give one index per dimension of the destination}}
  tile.atomic_add %v, %F : f32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{'tile.atomic_add' op element form (with indices) adds a scalar, got 64x128xf32 (fragment)}}
  tile.atomic_add %t, %F[%c0, %c0] : memref<64x128xf32, #tile.space<fragment>>, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %r = tile.region %F[%c0, %c0] [32, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<32x128xf32, global>
  // expected-error @+1 {{'tile.atomic_add' op value 64x128xf32 (fragment) and destination 32x128xf32 (global) have different extents (64x128 vs 32x128)}}
  tile.atomic_add %t, %r : memref<64x128xf32, #tile.space<fragment>>, !tile.region<32x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %d = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  // expected-error @+1 {{'tile.atomic_add' op destination must be global or shared, got 64x128xf32 (fragment)}}
  tile.atomic_add %t, %d : memref<64x128xf32, #tile.space<fragment>>, memref<64x128xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?xi8, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %v = arith.constant 1 : i8
  // expected-error @+1 {{'tile.atomic_add' op atomic add into 'i8' is not supported; the destination must be f32, f16, bf16, f64 or i32}}
  tile.atomic_add %v, %A[%b] : i8, memref<?xi8, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_add' op adds 'i32' into 'f32'; value and destination must both be float or both integer}}
  tile.atomic_add %v, %F[%c0, %c0] : i32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %r = tile.region %F[%c0, %c0] [64, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  // expected-error @+1 {{'tile.atomic_add' op element form indexes a buffer, not a region}}
  tile.atomic_add %v, %r[%c0, %c0] : f32, !tile.region<64x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.parallel' op extent #0 must be positive, got 0}}
  tile.parallel (%i) in [0] {
  }
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.parallel' op has 1 extents but 2 induction variables}}
  tile.parallel (%i, %j) in [4] {
  }
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tile.pipelined' op stages must be at least 1, got 0}}
  tile.pipelined %n = %c0 to %c4 stages 0 {
  }
}

// -----

// expected-error @+1 {{'tile.kernel' op argument #1 must be a global tensor (memref in #tile.space<global>) or a scalar, got 'memref<?xf32, #tile.space<shared>>'}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>, %B: memref<?xf32, #tile.space<shared>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
}

// -----

// expected-error @+1 {{'tile.kernel' op grid must have 1 to 3 extents, got 4}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0, s0, s0, s0) threads(32) as (%a, %b, %c, %d) {
}

// -----

// expected-error @+1 {{'tile.kernel' op grid map must use symbols only (s0, s1, ...), got 1 dimensions}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) (d0)[s0] -> (s0) threads(32) as (%a) {
}

// -----

// expected-error @+1 {{'tile.kernel' op grid map has 2 symbols but 1 argument dimensions are bound to them}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0, s1] -> (s0 + s1) threads(32) as (%a) {
}

// -----

// expected-error @+1 {{'tile.kernel' op grid symbol s0 takes dimension 3 of argument #0, which has rank 1}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[3]) ()[s0] -> (s0) threads(32) as (%a) {
}

// -----

// expected-error @+1 {{'tile.kernel' op grid symbol s0 takes a dimension of argument #1, which is not a tensor}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>, %n: i32) grid(%n[0]) ()[s0] -> (s0) threads(32) as (%a) {
}

// -----

// expected-error @+1 {{'tile.kernel' op threads must be a multiple of 32 in [32, 1024], got 100}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(100) as (%a) {
}

// -----

// expected-error @+1 {{'tile.kernel' op body must take the 1 kernel arguments and 1 block indices, got 3 block arguments}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%a, %b) {
}

// -----

// expected-error @+1 {{grid extent refers to %Z, which is not a kernel argument}}
tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%Z[0]) ()[s0] -> (s0) threads(32) as (%a) {
}


// -----

func.func @fill_outside(%g: memref<16xf32, #tile.space<global>>, %v: f32) {
  // expected-error @+1 {{'tile.fill' op must be inside a tile.kernel}}
  tile.fill %g, %v : memref<16xf32, #tile.space<global>>
  return
}

// -----

func.func @wgmma_wait_outside() {
  // expected-error @+1 {{'tile.wgmma_wait' op must be inside a tile.kernel}}
  tile.wgmma_wait pending 0
  return
}

// -----

tile.kernel @wgmma_wait_shared(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %s = tile.alloc : memref<64x64xf32, #tile.space<shared>>
  // expected-error @+1 {{'tile.wgmma_wait' op waits for accumulators in registers (fragment tiles), got 'memref<64x64xf32, #tile.space<shared>>'}}
  tile.wgmma_wait pending 0 (%s) : memref<64x64xf32, #tile.space<shared>>
}

// -----

tile.kernel @wgmma_wait_negative(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.wgmma_wait' op attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  tile.wgmma_wait pending -1
}

// -----

func.func @barrier_outside() {
  // expected-error @+1 {{'tile.barrier' op must be inside a tile.kernel}}
  tile.barrier
  return
}

// -----

func.func @parallel_outside() {
  // expected-error @+1 {{'tile.parallel' op must be inside a tile.kernel}}
  tile.parallel (%i) in [4] {
  }
  return
}

// -----

func.func @pipelined_outside(%lo: index, %hi: index) {
  // expected-error @+1 {{'tile.pipelined' op must be inside a tile.kernel}}
  tile.pipelined %n = %lo to %hi stages 2 {
  }
  return
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %i = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_rmw' op expects 2 indices for a 2-d destination, got 1}}
  tile.atomic_rmw max %v, %F[%c0] : f32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %i = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_rmw' op combines the scalar 'f32' without indices; give one index per dimension of the destination}}
  tile.atomic_rmw min %v, %F : f32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %i = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_rmw' op element form (with indices) combines a scalar, got 64x128xf32 (fragment)}}
  tile.atomic_rmw max %t, %F[%c0, %c0] : memref<64x128xf32, #tile.space<fragment>>, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %i = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_rmw' op combines 'i32' into 'f32'; value and destination must both be float or both integer}}
  tile.atomic_rmw max %i, %F[%c0, %c0] : i32, memref<?x128xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %v = arith.constant 1.0 : f32
  %i = arith.constant 1 : i32
  // expected-error @+1 {{'tile.atomic_rmw' op destination must be global or shared, got 64x128xf32 (fragment)}}
  tile.atomic_rmw min %t, %t : memref<64x128xf32, #tile.space<fragment>>, memref<64x128xf32, #tile.space<fragment>>
}

// -----

tile.kernel @k(%A: memref<?x128xbf16, #tile.space<global>>, %F: memref<?x128xf32, #tile.space<global>>)
    grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %t = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %r = tile.region %F[%c0, %c0] [32, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<32x128xf32, global>
  // expected-error @+1 {{'tile.atomic_rmw' op value 64x128xf32 (fragment) and destination 32x128xf32 (global) have different extents (64x128 vs 32x128)}}
  tile.atomic_rmw max %t, %r : memref<64x128xf32, #tile.space<fragment>>, !tile.region<32x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?x128xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  %r = tile.region %A[%c0, %c0] [64, 128] : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  // expected-error @+1 {{'tile.atomic_rmw' op element form indexes a buffer, not a region}}
  tile.atomic_rmw min %v, %r[%c0, %c0] : f32, !tile.region<64x128xf32, global>
}

// -----

tile.kernel @k(%A: memref<?xi8, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %v = arith.constant 1 : i8
  // expected-error @+1 {{'tile.atomic_rmw' op atomic max into 'i8' is not supported; the destination must be f32, f16, bf16, f64 or i32}}
  tile.atomic_rmw max %v, %A[%b] : i8, memref<?xi8, #tile.space<global>>
}

// -----

tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [max, min]}}
  tile.atomic_rmw add %v, %A[%b] : f32, memref<?xf32, #tile.space<global>>
}

// -----

func.func @arrive_outside(%c: memref<?xi32, #tile.space<global>>, %i: index) {
  // expected-error @+1 {{'tile.arrive_last' op must be inside a tile.kernel}}
  %l = tile.arrive_last %c[%i] of 2 : memref<?xi32, #tile.space<global>>
  return
}

// -----

tile.kernel @arrive_nested(%C: memref<?xi32, #tile.space<global>>)
    grid(%C[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %t = arith.constant true
  scf.if %t {
    // expected-error @+1 {{'tile.arrive_last' op must be directly in the kernel body: every thread of the block arrives, or none}}
    %l = tile.arrive_last %C[%b] of 2 : memref<?xi32, #tile.space<global>>
  }
}

// -----

tile.kernel @arrive_f32(%C: memref<?xf32, #tile.space<global>>)
    grid(%C[0]) ()[s0] -> (s0) threads(32) as (%b) {
  // expected-error @+1 {{'tile.arrive_last' op counters must be a rank-1 i32 buffer in global memory, got 'memref<?xf32, #tile.space<global>>'}}
  %l = tile.arrive_last %C[%b] of 2 : memref<?xf32, #tile.space<global>>
}

// -----

tile.kernel @arrive_count(%C: memref<?xi32, #tile.space<global>>)
    grid(%C[0]) ()[s0] -> (s0) threads(32) as (%b) {
  // expected-error @+1 {{'tile.arrive_last' op count must be at least 1, got 0}}
  %l = tile.arrive_last %C[%b] of 0 : memref<?xi32, #tile.space<global>>
}

// -----

func.func @discard_outside(%r: !tile.region<64xf32, global>) {
  // expected-error @+1 {{'tile.discard' op must be inside a tile.kernel}}
  tile.discard %r : !tile.region<64xf32, global>
  return
}

// -----

tile.kernel @discard_shared(%P: memref<?xf32, #tile.space<global>>)
    grid(%P[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %s = tile.alloc : memref<64xf32, #tile.space<shared>>
  %c0 = arith.constant 0 : index
  %r = tile.region %s[%c0] [32] : memref<64xf32, #tile.space<shared>> -> !tile.region<32xf32, shared>
  // expected-error @+1 {{'tile.discard' op needs a region of global memory, got '!tile.region<32xf32, shared>'}}
  tile.discard %r : !tile.region<32xf32, shared>
}

// -----

tile.kernel @discard_parallel(%P: memref<?xf32, #tile.space<global>>)
    grid(%P[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %r = tile.region %P[%b] [32] : memref<?xf32, #tile.space<global>> -> !tile.region<32xf32, global>
  tile.parallel (%i) in [4] {
    // expected-error @+1 {{'tile.discard' op must not be inside a tile.parallel loop: the block discards the region together}}
    tile.discard %r : !tile.region<32xf32, global>
  }
}

// -----

// The rules below are unreachable from the custom syntax (its parser builds what they check); the generic form
// reaches them.

// expected-error @+1 {{'tile.kernel' op kernels return nothing; results are written into argument tensors, got 1 results}}
"tile.kernel"() ({
^bb0(%A: memref<?xf32, #tile.space<global>>, %b: index):
}) {sym_name = "k", function_type = (memref<?xf32, #tile.space<global>>) -> f32,
    grid = affine_map<()[s0] -> (s0)>, grid_operands = array<i64: 0, 0>, threads = 32 : i64} : () -> ()

// -----

// expected-error @+1 {{'tile.kernel' op block index #0 must be an index}}
"tile.kernel"() ({
^bb0(%A: memref<?xf32, #tile.space<global>>, %b: i32):
}) {sym_name = "k", function_type = (memref<?xf32, #tile.space<global>>) -> (),
    grid = affine_map<()[s0] -> (s0)>, grid_operands = array<i64: 0, 0>, threads = 32 : i64} : () -> ()

// -----

tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  // expected-error @+1 {{'tile.parallel' op needs at least one extent}}
  "tile.parallel"() ({
  ^bb0:
  }) {extents = array<i64>} : () -> ()
}

// -----

tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  // expected-error @+1 {{'tile.parallel' op induction variables must be index, got 'i32'}}
  "tile.parallel"() ({
  ^bb0(%i: i32):
  }) {extents = array<i64: 4>} : () -> ()
}

// -----

tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tile.pipelined' op body must take exactly one index induction variable}}
  "tile.pipelined"(%c0, %c4) ({
  ^bb0(%n: i32):
  }) {stages = 2 : i64} : (index, index) -> ()
}

// -----

tile.kernel @k(%A: memref<?xf32, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  // expected-error @+1 {{'tile.alloc' op tiles have the identity layout, got strided<[2]>}}
  %t = tile.alloc : memref<64xf32, strided<[2]>, #tile.space<shared>>
}

// -----

tile.kernel @k(%A: memref<?xbf16, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?xbf16, #tile.space<global>>
  %s = memref.alloca(%n) : memref<?xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.copy' op copies a tile of dynamic shape ?xbf16 (global); take a static-shape region of it first}}
  tile.copy %A, %s : memref<?xbf16, #tile.space<global>>, memref<?xbf16, #tile.space<shared>>
}

// -----

tile.kernel @k(%A: memref<?xindex, #tile.space<global>>) grid(%A[0]) ()[s0] -> (s0) threads(32) as (%b) {
  %s = memref.alloca() : memref<4xindex, #tile.space<shared>>
  %f = memref.alloca() : memref<4xindex, #tile.space<fragment>>
  // expected-error @+1 {{'tile.copy' op converts 'index' to 'index'; only integer and float elements are copied}}
  tile.copy %s, %f : memref<4xindex, #tile.space<shared>>, memref<4xindex, #tile.space<fragment>>
}

// -----

// expected-error @+1 {{region element type must be an integer or float, got 'index'}}
func.func private @h(!tile.region<4xindex, global>)
}

// -----

// expected-error @+1 {{region element type must be an integer or float, got 'complex<f32>'}}
func.func private @h(!tile.region<4xcomplex<f32>, global>)

// -----

tile.kernel @stage_view_not_alloc(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  %v = tile.stage_view %a_s[%c0] : memref<64x64xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.stage_view' op views a buffer of a shared tile's tile.alloc, got a value not defined by one}}
  %w = tile.stage_view %v[%c0] : memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @stage_view_single(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.stage_view' op views a buffer of a shared tile that is not multi-buffered (its tile.alloc has no 'tile.stages')}}
  %v = tile.stage_view %a_s[%c0] : memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @stage_view_out_of_range(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c3 = arith.constant 3 : index
  %a_s = tile.alloc {tile.stages = 3 : i64} : memref<64x64xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.stage_view' op views buffer 3 of a tile with 3 buffers}}
  %v = tile.stage_view %a_s[%c3] : memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @stage_view_fragment(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %f = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  // expected-error @+1 {{'tile.stage_view' op tile must be shared, got 64x64xbf16 (fragment)}}
  %v = tile.stage_view %f[%c0] : memref<64x64xbf16, #tile.space<fragment>>
}

// -----

tile.kernel @stage_view_type(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc {tile.stages = 2 : i64} : memref<64x64xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.stage_view' op expected 2 operands, but found 1}}
  %v = "tile.stage_view"(%a_s) : (memref<64x64xbf16, #tile.space<shared>>) -> memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @async_copy_from_shared(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %a_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  %b_s = tile.alloc : memref<64x64xbf16, #tile.space<shared>>
  // expected-error @+1 {{'tile.async_copy' op source must be global, got 64x64xbf16 (shared)}}
  tile.async_copy %a_s, %b_s : memref<64x64xbf16, #tile.space<shared>>, memref<64x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @async_copy_into_fragment(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %f = tile.alloc : memref<64x64xbf16, #tile.space<fragment>>
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-error @+1 {{'tile.async_copy' op target must be shared, got 64x64xbf16 (fragment)}}
  tile.async_copy %r, %f : !tile.region<64x64xbf16, global>, memref<64x64xbf16, #tile.space<fragment>>
}

// -----

tile.kernel @async_copy_extents(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc : memref<32x64xbf16, #tile.space<shared>>
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-error @+1 {{'tile.async_copy' op source 64x64xbf16 (global) and target 32x64xbf16 (shared) have different extents (64x64 vs 32x64 with unit dimensions dropped)}}
  tile.async_copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<32x64xbf16, #tile.space<shared>>
}

// -----

tile.kernel @async_copy_converts(%X: memref<?x64xbf16, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %a_s = tile.alloc : memref<64x64xf32, #tile.space<shared>>
  %r = tile.region %X[%c0, %c0] [64, 64] : memref<?x64xbf16, #tile.space<global>> -> !tile.region<64x64xbf16, global>
  // expected-error @+1 {{'tile.async_copy' op copies 'bf16' into 'f32'; an asynchronous copy moves bytes and cannot convert}}
  tile.async_copy %r, %a_s : !tile.region<64x64xbf16, global>, memref<64x64xf32, #tile.space<shared>>
}

// -----

func.func @async_commit_outside() {
  // expected-error @+1 {{'tile.async_commit' op must be inside a tile.kernel}}
  tile.async_commit
  return
}

// -----

func.func @async_wait_outside() {
  // expected-error @+1 {{'tile.async_wait' op must be inside a tile.kernel}}
  tile.async_wait pending 0
  return
}

// -----

tile.kernel @async_wait_negative(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  // expected-error @+1 {{'tile.async_wait' op attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  tile.async_wait pending -1
}
