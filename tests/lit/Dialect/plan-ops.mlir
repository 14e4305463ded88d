// Launch plans round-trip: tile.entry, tile.workspace, tile.launch, tile.free.
// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s -mlir-print-op-generic | tile-opt | FileCheck %s

tile.kernel @to_f32(%X: memref<?x128xbf16, #tile.space<global>>, %W: memref<?x128xf32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}
tile.kernel @main(%W: memref<?x128xf32, #tile.space<global>>, %P: memref<2x?x128xf32, #tile.space<global>>)
    grid(%W[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%r) {
}
tile.kernel @from_f32(%W: memref<?x128xf32, #tile.space<global>>, %X: memref<?x128xbf16, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}

// CHECK-LABEL: tile.entry @plan(
// CHECK-SAME:    %[[X:[^:]*]]: memref<?x128xbf16, #tile.space<global>>, %[[N:[^:]*]]: memref<16xi32, #tile.space<global>>)
// CHECK-SAME:    attributes {tile.arg_names = ["X", "N"]}
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[D:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK:         %[[W:.*]] = tile.workspace [%[[D]]] : memref<?x128xf32, #tile.space<global>>
// CHECK:         %[[P:.*]] = tile.workspace [%[[D]]] zeroed : memref<2x?x128xf32, #tile.space<global>>
// CHECK:         %[[S:.*]] = tile.workspace zeroed : memref<16xf32, #tile.space<global>>
// CHECK:         tile.launch @to_f32(%[[X]], %[[W]]) : (memref<?x128xbf16, #tile.space<global>>, memref<?x128xf32, #tile.space<global>>)
// CHECK:         tile.launch @main(%[[W]], %[[P]]) : (memref<?x128xf32, #tile.space<global>>, memref<2x?x128xf32, #tile.space<global>>)
// CHECK:         tile.free %[[P]] : memref<2x?x128xf32, #tile.space<global>>
// CHECK:         tile.launch @from_f32(%[[W]], %[[X]])
// CHECK:         tile.free %[[W]] : memref<?x128xf32, #tile.space<global>>
// CHECK:         tile.free %[[S]] : memref<16xf32, #tile.space<global>>
// CHECK-NEXT:  }
tile.entry @plan(%X: memref<?x128xbf16, #tile.space<global>>, %N: memref<16xi32, #tile.space<global>>)
    attributes {tile.arg_names = ["X", "N"]} {
  %c0 = arith.constant 0 : index
  %d = memref.dim %X, %c0 : memref<?x128xbf16, #tile.space<global>>
  %w = tile.workspace [%d] : memref<?x128xf32, #tile.space<global>>
  %p = tile.workspace [%d] zeroed : memref<2x?x128xf32, #tile.space<global>>
  %s = tile.workspace zeroed : memref<16xf32, #tile.space<global>>
  tile.launch @to_f32(%X, %w) : (memref<?x128xbf16, #tile.space<global>>, memref<?x128xf32, #tile.space<global>>)
  tile.launch @main(%w, %p) : (memref<?x128xf32, #tile.space<global>>, memref<2x?x128xf32, #tile.space<global>>)
  tile.free %p : memref<2x?x128xf32, #tile.space<global>>
  tile.launch @from_f32(%w, %X) : (memref<?x128xf32, #tile.space<global>>, memref<?x128xbf16, #tile.space<global>>)
  tile.free %w : memref<?x128xf32, #tile.space<global>>
  tile.free %s : memref<16xf32, #tile.space<global>>
}

// Sizes computed from dims with every kind of index arithmetic a plan
// expression can say.
// CHECK-LABEL: tile.entry @arith
// CHECK:         arith.ceildivsi
// CHECK:         arith.maxsi
// CHECK:         tile.workspace [%{{.*}}, %{{.*}}] : memref<?x?xf32, #tile.space<global>>
tile.entry @arith(%X: memref<?x128xbf16, #tile.space<global>>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %d = memref.dim %X, %c0 : memref<?x128xbf16, #tile.space<global>>
  %a = arith.addi %d, %c64 : index
  %b = arith.subi %a, %c64 : index
  %m = arith.muli %b, %c64 : index
  %q = arith.divsi %m, %c64 : index
  %f = arith.floordivsi %q, %c64 : index
  %c = arith.ceildivsi %d, %c64 : index
  %r = arith.remsi %c, %c64 : index
  %lo = arith.minsi %r, %f : index
  %hi = arith.maxsi %lo, %c : index
  %w = tile.workspace [%hi, %d] : memref<?x?xf32, #tile.space<global>>
  tile.free %w : memref<?x?xf32, #tile.space<global>>
}

// An entry with nothing to allocate: one launch.
// CHECK-LABEL: tile.entry @plain(
// CHECK-NEXT:    tile.launch @main(
// CHECK-NEXT:  }
tile.entry @plain(%W: memref<?x128xf32, #tile.space<global>>, %P: memref<2x?x128xf32, #tile.space<global>>) {
  tile.launch @main(%W, %P) : (memref<?x128xf32, #tile.space<global>>, memref<2x?x128xf32, #tile.space<global>>)
}

// atomic_add's `exclusive` marker round-trips.
// CHECK-LABEL: tile.kernel @excl
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}} exclusive : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
// CHECK:         tile.atomic_add %{{.*}}, %{{.*}}[%{{.*}}] order(seq_cst) exclusive : f32, memref<?xf32, #tile.space<global>>
tile.kernel @excl(%Y: memref<?xf32, #tile.space<global>>) grid(%Y[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%b) {
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %acc = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %o = arith.muli %b, %c64 : index
  %r = tile.region %Y[%o] [64] : memref<?xf32, #tile.space<global>> -> !tile.region<64xf32, global>
  tile.atomic_add %acc, %r exclusive : memref<64xf32, #tile.space<fragment>>, !tile.region<64xf32, global>
  tile.atomic_add %one, %Y[%o] order(seq_cst) exclusive : f32, memref<?xf32, #tile.space<global>>
}
