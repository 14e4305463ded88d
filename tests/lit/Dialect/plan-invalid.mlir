// Every verifier rule of the launch-plan ops, one case per rule, with the exact message.
// RUN: tile-opt %s -split-input-file -verify-diagnostics

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}
// expected-error @+1 {{'tile.entry' op argument #0 must be a global tensor (memref in #tile.space<global>) or a scalar, got 'memref<?xf32, #tile.space<shared>>'}}
tile.entry @e(%X: memref<?xf32, #tile.space<shared>>) {
}

// -----

// expected-error @+1 {{'tile.entry' op entries return nothing; results are written into argument tensors, got 1 results}}
"tile.entry"() <{sym_name = "e", function_type = (memref<?xf32, #tile.space<global>>) -> f32}> ({
^bb0(%X: memref<?xf32, #tile.space<global>>):
}) : () -> ()

// -----

// expected-error @+1 {{'tile.entry' op body argument #0 has type 'memref<?xf16, #tile.space<global>>' but the signature says 'memref<?xf32, #tile.space<global>>'}}
"tile.entry"() <{sym_name = "e", function_type = (memref<?xf32, #tile.space<global>>) -> ()}> ({
^bb0(%X: memref<?xf16, #tile.space<global>>):
}) : () -> ()

// -----

// expected-error @+1 {{'tile.entry' op body must take the 1 entry arguments, got 0 block arguments}}
"tile.entry"() <{sym_name = "e", function_type = (memref<?xf32, #tile.space<global>>) -> ()}> ({
^bb0:
}) : () -> ()

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op is not allowed in a tile.entry, whose body holds only tile.workspace, tile.launch, tile.free and index arithmetic on argument dims}}
  %v = memref.load %X[%c0] : memref<?xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  %c0 = arith.constant 0 : index
  %w = tile.workspace zeroed : memref<16xf32, #tile.space<global>>
  // expected-error @+1 {{'memref.dim' op in a tile.entry may only take dims of the entry's arguments}}
  %d = memref.dim %w, %c0 : memref<16xf32, #tile.space<global>>
  tile.free %w : memref<16xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'arith.constant' op is not allowed in a tile.entry}}
  %c1 = arith.constant 1.0 : f32
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.workspace' op is never freed; every workspace needs a tile.free after its last use}}
  %w = tile.workspace : memref<16xf32, #tile.space<global>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}
tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %X, %c0 : memref<?xf32, #tile.space<global>>
  %w = tile.workspace [%d] : memref<?xf32, #tile.space<global>>
  // expected-note @+1 {{freed here}}
  tile.free %w : memref<?xf32, #tile.space<global>>
  // expected-error @+1 {{'tile.launch' op uses a workspace after its tile.free}}
  tile.launch @k(%w) : (memref<?xf32, #tile.space<global>>)
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  %w = tile.workspace : memref<16xf32, #tile.space<global>>
  // expected-note @+1 {{first freed here}}
  tile.free %w : memref<16xf32, #tile.space<global>>
  // expected-error @+1 {{'tile.free' op frees a workspace twice}}
  tile.free %w : memref<16xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.free' op frees only what tile.workspace allocated; the operand is an argument of the entry}}
  tile.free %X : memref<?xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.workspace' op allocates global tensors (memref in #tile.space<global>), got 'memref<16xf32, #tile.space<shared>>'}}
  %w = tile.workspace : memref<16xf32, #tile.space<shared>>
  tile.free %w : memref<16xf32, #tile.space<shared>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.workspace' op takes one size per dynamic dimension: 'memref<?x?xf32, #tile.space<global>>' has 2 but 0 were given}}
  %w = tile.workspace : memref<?x?xf32, #tile.space<global>>
  tile.free %w : memref<?x?xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.workspace' op allocates dense row-major tensors; the result type must have the identity layout, got 'memref<16xf32, strided<[2]>, #tile.space<global>>'}}
  %w = tile.workspace : memref<16xf32, strided<[2]>, #tile.space<global>>
  tile.free %w : memref<16xf32, strided<[2]>, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.workspace' op element type must be an integer or float, got 'index'}}
  %w = tile.workspace : memref<16xindex, #tile.space<global>>
  tile.free %w : memref<16xindex, #tile.space<global>>
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
  // expected-error @+1 {{'tile.workspace' op expects parent op 'tile.entry'}}
  %w = tile.workspace : memref<16xf32, #tile.space<global>>
}

// -----

tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.launch' op launches @missing, which is not defined in this module}}
  tile.launch @missing(%X) : (memref<?xf32, #tile.space<global>>)
}

// -----

tile.entry @other(%X: memref<?xf32, #tile.space<global>>) {
}
tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.launch' op launches @other, which is a 'tile.entry', not a tile.kernel}}
  tile.launch @other(%X) : (memref<?xf32, #tile.space<global>>)
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}
tile.entry @e(%X: memref<?xf32, #tile.space<global>>) {
  // expected-error @+1 {{'tile.launch' op passes 2 arguments to @k, which takes 1}}
  tile.launch @k(%X, %X) : (memref<?xf32, #tile.space<global>>, memref<?xf32, #tile.space<global>>)
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
}
tile.entry @e(%X: memref<?xbf16, #tile.space<global>>) {
  // expected-error @+1 {{'tile.launch' op argument #0 has type 'memref<?xbf16, #tile.space<global>>' but @k takes 'memref<?xf32, #tile.space<global>>'}}
  tile.launch @k(%X) : (memref<?xbf16, #tile.space<global>>)
}

// -----

tile.kernel @k(%X: memref<?xf32, #tile.space<global>>) grid(%X[0]) ()[s0] -> (s0) threads(128) as (%r) {
  // expected-error @+1 {{'tile.launch' op expects parent op 'tile.entry'}}
  tile.launch @k(%X) : (memref<?xf32, #tile.space<global>>)
}
