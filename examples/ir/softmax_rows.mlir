// Row-wise softmax of a [rows, 128] f32 tensor, 64 rows per block, written at
// tile level: copy a block of rows into a fragment, reduce max and sum along
// the row, normalise element-wise, write back. Rows past the end of the
// tensor are masked by the regions (the grid is ceil(rows / 64) blocks).
tile.kernel @softmax_rows(%X: memref<?x128xf32, #tile.space<global>>,
                          %Y: memref<?x128xf32, #tile.space<global>>)
    grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%bx)
    attributes {constants = {block = 64 : i64}} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %bx, %c64 : index
  %x = tile.alloc : memref<64x128xf32, #tile.space<fragment>>
  %m = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %l = tile.alloc : memref<64xf32, #tile.space<fragment>>
  %xr = tile.region %X[%row, %c0] [64, 128]
      : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  tile.copy %xr, %x : !tile.region<64x128xf32, global>, memref<64x128xf32, #tile.space<fragment>>
  tile.reduce max %x -> %m dim 1 clear
      : memref<64x128xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
  tile.parallel (%i, %j) in [64, 128] {
    %v = memref.load %x[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
    %mi = memref.load %m[%i] : memref<64xf32, #tile.space<fragment>>
    %d = arith.subf %v, %mi : f32
    %e = math.exp %d : f32
    memref.store %e, %x[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
  }
  tile.reduce sum %x -> %l dim 1 clear
      : memref<64x128xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
  tile.parallel (%i, %j) in [64, 128] {
    %v = memref.load %x[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
    %s = memref.load %l[%i] : memref<64xf32, #tile.space<fragment>>
    %q = arith.divf %v, %s : f32
    memref.store %q, %x[%i, %j] : memref<64x128xf32, #tile.space<fragment>>
  }
  %yr = tile.region %Y[%row, %c0] [64, 128]
      : memref<?x128xf32, #tile.space<global>> -> !tile.region<64x128xf32, global>
  tile.copy %x, %yr : memref<64x128xf32, #tile.space<fragment>>, !tile.region<64x128xf32, global>
}
