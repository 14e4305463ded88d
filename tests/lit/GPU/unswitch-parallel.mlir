// tile-unswitch-parallel: a comparison affine in the parallel loop's indices is decided for the whole iteration box
// by one corner. Known true there: it becomes true. Known only at run time: the loop is versioned on it. Mixed, or
// not affine with constant coefficients: left alone.
// RUN: tile-opt %s -split-input-file -tile-unswitch-parallel | FileCheck %s

// A sequence tail and a causal mask: lhs - rhs grows with j (column 63 decides `n + j < seq`) and, for the causal
// test `n + j <= m + i`, with j and against i (corner i = 0, j = 63). Both checks are evaluated before the loop, and
// the first copy of the loop has neither the comparisons nor the select. Both checks read the same corner column
// (n + 63): computed once (the pass merges the checks' common arithmetic).
// CHECK-LABEL: tile.kernel @causal
// CHECK:       %[[C63:.*]] = arith.constant 63 : index
// CHECK:       %[[LAST:.*]] = arith.addi %[[N:.*]], %[[C63]] : index
// CHECK:       %[[TAIL:.*]] = arith.cmpi slt, %[[LAST]], %[[SEQ:.*]] : index
// CHECK-NEXT:  %[[DIAG:.*]] = arith.cmpi sle, %[[LAST]], %[[M:.*]] : index
// CHECK:       %[[ALL:.*]] = arith.andi %[[TAIL]], %[[DIAG]] : i1
// CHECK:       scf.if %[[ALL]] {
// CHECK-NEXT:    tile.parallel (%{{.*}}, %{{.*}}) in [64, 64] {
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       arith.select
// CHECK:           arith.mulf
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:  } else {
// CHECK-NEXT:    tile.parallel (%{{.*}}, %{{.*}}) in [64, 64] {
// CHECK:           arith.cmpi slt
// CHECK:           arith.cmpi sle
// CHECK:           arith.select
tile.kernel @causal(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.5 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %seq = memref.dim %X, %c0 : memref<?x64xf32, #tile.space<global>>
  %n = arith.muli %b, %c64 : index
  %m = arith.addi %n, %c64 : index
  %s = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
  tile.parallel (%i, %j) in [64, 64] {
    %col = arith.addi %n, %j : index
    %inside = arith.cmpi slt, %col, %seq : index
    %row = arith.addi %m, %i : index
    %causal = arith.cmpi sle, %col, %row : index
    %keep = arith.andi %inside, %causal : i1
    %x = memref.load %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
    %y = arith.mulf %x, %cst : f32
    %z = arith.select %keep, %y, %ninf : f32
    memref.store %z, %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
  }
}

// -----

// `2 * j + 1 <= 127` at j = 63 is 127 <= 127: true everywhere, folded to true, no versioning. `j < 32` is mixed (its
// corner check folds to false) and `i * %k < 5` is not affine with a constant coefficient: both stay. A `>` whose
// difference falls with i is decided at i = 31: `%base - i > 0` everywhere iff `%base - 31 > 0`.
// CHECK-LABEL: tile.kernel @decided
// CHECK-NOT:   scf.if
// CHECK:       tile.parallel
// CHECK-NOT:     arith.cmpi sle
// CHECK:         arith.cmpi slt, %{{.*}}, %c32
// CHECK:         arith.cmpi slt, %{{.*}}, %c5
// CHECK:       }
// CHECK:       %[[C31:.*]] = arith.constant 31 : index
// CHECK:       %[[LOW:.*]] = arith.subi %[[BASE:.*]], %[[C31]] : index
// CHECK:       %[[CHECK:.*]] = arith.cmpi sgt, %[[LOW]], %c0
// CHECK:       scf.if %[[CHECK]] {
// CHECK-NEXT:    tile.parallel (%{{.*}}) in [32] {
// CHECK-NOT:       arith.cmpi
// CHECK:         } else {
tile.kernel @decided(%X: memref<?x64xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%b) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c32 = arith.constant 32 : index
  %c127 = arith.constant 127 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %k = memref.dim %X, %c0 : memref<?x64xf32, #tile.space<global>>
  %base = arith.muli %b, %c32 : index
  %s = tile.alloc : memref<32x64xf32, #tile.space<fragment>>
  %r = tile.alloc : memref<32xf32, #tile.space<fragment>>
  tile.parallel (%i, %j) in [32, 64] {
    %twice = arith.muli %j, %c2 : index
    %odd = arith.addi %twice, %c1 : index
    %always = arith.cmpi sle, %odd, %c127 : index
    %half = arith.cmpi slt, %j, %c32 : index
    %scaled = arith.muli %i, %k : index
    %small = arith.cmpi slt, %scaled, %c5 : index
    %a = arith.andi %always, %half : i1
    %keep = arith.andi %a, %small : i1
    %v = arith.select %keep, %one, %zero : f32
    memref.store %v, %s[%i, %j] : memref<32x64xf32, #tile.space<fragment>>
  }
  tile.parallel (%i) in [32] {
    %low = arith.subi %base, %i : index
    %positive = arith.cmpi sgt, %low, %c0 : index
    %v = arith.select %positive, %one, %zero : f32
    memref.store %v, %r[%i] : memref<32xf32, #tile.space<fragment>>
  }
}
