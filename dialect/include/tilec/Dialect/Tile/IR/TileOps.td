#ifndef TILEC_DIALECT_TILE_IR_TILEOPS_TD
#define TILEC_DIALECT_TILE_IR_TILEOPS_TD

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "tilec/Dialect/Tile/IR/TileAttrs.td"
include "tilec/Dialect/Tile/IR/TileTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// A value that names a whole tile: a memref (global tensor, shared tile,
// fragment, local array) or a buffer region. Which memory spaces an operand
// accepts is checked by each op's verifier, so that the message can name it.
def Tile_TileLike : AnyTypeOf<[AnyMemRef, Tile_RegionType],
                               "memref or buffer region">;

//===----------------------------------------------------------------------===//
// tile.kernel
//===----------------------------------------------------------------------===//

def Tile_KernelOp : Tile_Op<"kernel", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    AutomaticAllocationScope,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a device kernel: one program per block of a grid";
  let description = [{
    A kernel takes global tensors (memrefs in `#tile.space<global>`) and scalar
    arguments. Its grid has one to three extents, each an affine expression of
    argument dimensions: `grid(%Q[2], %Q[1]) ()[s0, s1] -> (s0, s1 ceildiv 64)`
    binds `s0` to dim 2 of `%Q` and `s1` to dim 1. The body describes what one
    block does; it receives the kernel arguments followed by one block index per
    grid extent, named after `as`. Compile-time constants the kernel was
    specialized with are kept in the `constants` dictionary for reference.

    ```mlir
    tile.kernel @scale(%X: memref<?x128xf32, #tile.space<global>>)
        grid(%X[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%bx) {
      ...
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<FunctionType>:$function_type,
    AffineMapAttr:$grid,
    DenseI64ArrayAttr:$grid_operands,
    I64Attr:$threads,
    DefaultValuedAttr<DictionaryAttr, "{}">:$constants
  );
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::FunctionType":$type,
                   "::mlir::AffineMap":$grid,
                   "::llvm::ArrayRef<std::pair<int64_t, int64_t>>":$gridDims,
                   "int64_t":$threads)>
  ];
  let extraClassDeclaration = [{
    /// Number of grid extents, which is also the number of block indices.
    unsigned getGridRank() { return getGrid().getNumResults(); }
    unsigned getNumArguments() { return getFunctionType().getNumInputs(); }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getArgument(unsigned i) {
      return getBodyBlock().getArgument(i);
    }
    ::mlir::BlockArgument getBlockIndex(unsigned i) {
      return getBodyBlock().getArgument(getNumArguments() + i);
    }
    /// The (argument, dimension) pair that grid symbol `s<i>` stands for.
    std::pair<int64_t, int64_t> getGridSymbol(unsigned i) {
      return {getGridOperands()[2 * i], getGridOperands()[2 * i + 1]};
    }
    /// The grid extents as index values built at `b`'s insertion point, grid symbol `s<i>` given by `symbols[i]`:
    /// arith ops (addi, muli, floordivsi, ceildivsi, remsi) that the CUDA emitter, the CPU lowering and the launch
    /// plan's expressions all handle.
    ::llvm::SmallVector<::mlir::Value> buildGridExtents(::mlir::OpBuilder &b, ::mlir::Location loc,
                                                        ::mlir::ValueRange symbols);
  }];
}

//===----------------------------------------------------------------------===//
// Buffers and regions
//===----------------------------------------------------------------------===//

def Tile_AllocOp : Tile_Op<"alloc", [
    MemoryEffects<[MemAlloc<DefaultResource, 0, FullEffect>]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a shared tile, a register fragment or a thread-local array";
  let description = [{
    Allocates a tile of static shape for the lifetime of the enclosing kernel
    body. The memory space decides who holds it: `shared` tiles are visible to
    every thread of the block, `fragment` tiles are distributed over the
    block's threads, `local` arrays are private to each thread.

    ```mlir
    %k_s = tile.alloc : memref<64x128xbf16, #tile.space<shared>>
    %acc = tile.alloc : memref<64x64xf32, #tile.space<fragment>>
    ```
  }];
  let results = (outs Res<AnyStaticShapeMemRef, "", [MemAlloc]>:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_RegionOp : Tile_Op<"region", [Pure]> {
  let summary = "a static-shape window at dynamic offsets into a buffer";
  let description = [{
    `tile.region %buf[%o0, ..., %oN] [s0, ..., sN]` views `s0 x ... x sN`
    elements of `%buf` starting at the given offsets. The window may overhang
    the buffer: reads outside yield `pad` (zero unless given), writes and
    atomics outside are dropped. Dimensions of extent 1 are dropped from the
    result type, so `%Q[%b, %m, %h, 0] [1, 64, 1, 128]` is a 64x128 region.

    ```mlir
    %r = tile.region %Q[%b, %row, %h, %c0] [1, 64, 1, 128]
        : memref<?x?x?x128xbf16, #tile.space<global>> -> !tile.region<64x128xbf16, global>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$sizes, OptionalAttr<F64Attr>:$pad);
  let results = (outs Tile_RegionType:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` $sizes (`pad` `(` $pad^ `)`)? attr-dict `:`
    qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::ValueRange":$offsets,
                   "::llvm::ArrayRef<int64_t>":$sizes)>
  ];
}

//===----------------------------------------------------------------------===//
// Whole-tile data movement and compute
//===----------------------------------------------------------------------===//

def Tile_CopyOp : Tile_Op<"copy"> {
  let summary = "copy a tile or region into another, converting the dtype";
  let description = [{
    Copies every element of `source` into `target`. The two must have the same
    extents once dimensions of extent 1 are dropped; element types may differ
    (float ↔ float and int ↔ float conversions round to nearest even). Reading a
    region past its buffer yields the pad value; writing past it is dropped.
    A copy between two global buffers is rejected: stage it through a tile.

    ```mlir
    tile.copy %q_region, %q_s : !tile.region<64x128xbf16, global>, memref<64x128xbf16, #tile.space<shared>>
    ```
  }];
  let arguments = (ins Arg<Tile_TileLike, "", [MemRead]>:$source,
                       Arg<Tile_TileLike, "", [MemWrite]>:$target);
  let assemblyFormat = [{
    $source `,` $target attr-dict `:` qualified(type($source)) `,` qualified(type($target))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tile_FillOp : Tile_Op<"fill", [
    TypesMatchWith<"value has the target's element type", "target", "value",
                   "::tilec::tile::getElementTypeOf($_self)">]> {
  let summary = "set every element of a tile to one value";
  let description = [{
    ```mlir
    %zero = arith.constant 0.0 : f32
    tile.fill %acc, %zero : memref<64x64xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins Arg<Tile_TileLike, "", [MemWrite]>:$target,
                       AnyType:$value);
  let assemblyFormat = "$target `,` $value attr-dict `:` qualified(type($target))";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "tile matrix product: C (+)= op(A) · op(B)";
  let description = [{
    Multiplies `a` (M x K, or K x M with `transpose_a`) by `b` (K x N, or N x K
    with `transpose_b`) and adds the product into the fragment `c` (M x N), or
    overwrites `c` with `clear`. `a` is a shared tile or a fragment (a fragment
    cannot be transposed), `b` a shared tile, `c` a fragment. The operands
    have the same element type (bf16, f16 or f32) and `c` is f32. `policy` says
    how the block's warps partition `c`.

    ```mlir
    tile.gemm %k_s, %q_s -> %s transpose_b clear
        : memref<64x128xbf16, #tile.space<shared>>, memref<64x128xbf16, #tile.space<shared>>,
          memref<64x64xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins Arg<Tile_TileLike, "", [MemRead]>:$a,
                       Arg<Tile_TileLike, "", [MemRead]>:$b,
                       Arg<Tile_TileLike, "", [MemRead, MemWrite]>:$c,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                       UnitAttr:$clear,
                       DefaultValuedAttr<Tile_GemmPolicyAttr,
                         "::tilec::tile::GemmPolicy::Square">:$policy);
  let assemblyFormat = [{
    $a `,` $b `->` $c (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    (`clear` $clear^)? (`policy` $policy^)? attr-dict `:` qualified(type($a)) `,`
    qualified(type($b)) `,` qualified(type($c))
  }];
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "sum, max or min of a tile along one dimension";
  let description = [{
    Reduces `source` along `dim` into `target`, whose shape is the source's
    without that dimension. With `clear` the target's old contents are ignored;
    without it they take part in the reduction (accumulate).

    ```mlir
    tile.reduce max %s -> %row_max dim 1 clear
        : memref<64x64xf32, #tile.space<fragment>> -> memref<64xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins Tile_ReduceKindAttr:$kind,
                       Arg<Tile_TileLike, "", [MemRead]>:$source,
                       Arg<Tile_TileLike, "", [MemRead, MemWrite]>:$target,
                       I64Attr:$dim, UnitAttr:$clear);
  let assemblyFormat = [{
    $kind $source `->` $target `dim` $dim (`clear` $clear^)? attr-dict `:`
    qualified(type($source)) `->` qualified(type($target))
  }];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "dst += value, atomically with respect to every other block";
  let description = [{
    Element form: `tile.atomic_add %v, %dst[%i, %j]` adds the scalar `%v` into
    one element of `%dst`. Region form: `tile.atomic_add %tile, %region` adds
    every element of a tile into the matching element of a region or buffer of
    the same extents (unit dimensions dropped); elements of an overhanging
    region that fall outside its buffer are dropped. The destination's element
    type may differ from the value's (an f32 fragment into a bf16 tensor): the
    sum is rounded to the destination type. Destinations are f32, f16, bf16, i32
    or f64 buffers in global or shared memory. How the atomic is realised is
    decided by `tile-legalize-atomics`.

    `exclusive` records that no other block of the launch touches the
    elements this op updates (and that within the block the updates do not
    collide either), so it may be realised as a plain read-modify-write.
    `tile-legalize-atomics` sets it where its conflict analysis proves this;
    it is a promise the verifier cannot check.

    `write_once` (only with `exclusive`) promises more: every element this op
    updates receives no other update during the launch (the op runs at most
    once per block and nothing else writes the destination), and its prior
    contents do not matter: the op sets it to `0 + value`, a plain store.
    `tile-legalize-atomics` sets it on the split strategy's partial slices,
    which are either zeroed first or written in full by the grid; stores
    instead of read-modify-writes halve their traffic.

    ```mlir
    tile.atomic_add %dq, %dq_region order(relaxed)
        : memref<64x128xf32, #tile.space<fragment>>, !tile.region<64x128xbf16, global>
    ```
  }];
  // Effects (getEffects): reads and writes `dest`; reads `value` too when it is a tile (the region form), which
  // passes that move or erase ops rely on (a copy into the tile must stay before the atomic).
  let arguments = (ins AnyType:$value,
                       Tile_TileLike:$dest,
                       Variadic<Index>:$indices,
                       DefaultValuedAttr<Tile_MemoryOrderAttr,
                         "::tilec::tile::MemoryOrder::Relaxed">:$order,
                       UnitAttr:$exclusive,
                       UnitAttr:$write_once);
  let assemblyFormat = [{
    $value `,` $dest (`[` $indices^ `]`)? (`order` `(` $order^ `)`)?
    (`exclusive` $exclusive^)? (`write_once` $write_once^)? attr-dict `:`
    type($value) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for `dst[i, ...] += v`, false for `region += tile`.
    bool isElementForm() { return !getIndices().empty() || !::llvm::isa<
        ::mlir::MemRefType, ::tilec::tile::RegionType>(getValue().getType()); }
  }];
}

def Tile_AtomicRmwOp : Tile_Op<"atomic_rmw", [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "dst = max(dst, value) or min(dst, value), atomically with respect to every other block";
  let description = [{
    The element and region forms of `tile.atomic_add`, with another combiner:
    `max` or `min`. Both are exact and give the same result in any order, so
    unlike an add they need no atomic strategy: `tile-legalize-atomics`
    leaves them as they are, and they are deterministic as written.

    Floats compare as IEEE `maximum`/`minimum` do: a NaN on either side gives
    a NaN, and -0.0 is below +0.0. A value of another float type than the
    destination (an f32 tile into a bf16 tensor) is rounded to the
    destination's type; rounding preserves order, so the result is the
    rounded extremum either way. Integers compare signed. Destinations are
    f32, f16, bf16, i32 or f64 buffers in global or shared memory.

    ```mlir
    tile.atomic_rmw max %v, %hist[%bin] : f32, memref<?xf32, #tile.space<global>>
    tile.atomic_rmw min %t, %region order(release)
        : memref<64xf32, #tile.space<fragment>>, !tile.region<64xbf16, global>
    ```
  }];
  // Effects as tile.atomic_add's (getEffects).
  let arguments = (ins Tile_AtomicRmwKindAttr:$kind,
                       AnyType:$value,
                       Tile_TileLike:$dest,
                       Variadic<Index>:$indices,
                       DefaultValuedAttr<Tile_MemoryOrderAttr,
                         "::tilec::tile::MemoryOrder::Relaxed">:$order);
  let assemblyFormat = [{
    $kind $value `,` $dest (`[` $indices^ `]`)? (`order` `(` $order^ `)`)?
    attr-dict `:` type($value) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for `dst[i, ...] = max(dst[i, ...], v)`, false for the region form.
    bool isElementForm() { return !getIndices().empty() || !::llvm::isa<
        ::mlir::MemRefType, ::tilec::tile::RegionType>(getValue().getType()); }
  }];
}

//===----------------------------------------------------------------------===//
// GPU lowering
//===----------------------------------------------------------------------===//

def Tile_ArriveLastOp : Tile_Op<"arrive_last"> {
  let summary = "counts the block's arrival at a counter; true in the last of `count` blocks to arrive";
  let description = [{
    `%last = tile.arrive_last %counters[%i] of N` makes every write the block
    made to global memory so far visible to the whole grid, then adds one to
    `%counters[%i]` atomically. It yields true, in every thread of the block,
    in the block that brings the counter to `N`: the last of the `N` blocks
    that share the counter, which then sees everything they wrote before
    arriving. The counter must start at zero and is left at `N`.

    `tile-legalize-atomics` uses it for the split strategy's sum: the last of
    the blocks whose partial slices meet at one destination tile adds them
    into the destination, in a fixed order, while they are still in L2.
    Block-uniform: it must run in every thread of the block or in none
    (directly in the kernel body).

    ```mlir
    %last = tile.arrive_last %counters[%tile] of 4 : memref<?xi32, #tile.space<global>>
    ```
  }];
  // No declared memory effects: like tile.barrier it counts as having every effect, so nothing moves across it.
  let arguments = (ins AnyMemRef:$counters, Index:$index, I64Attr:$count);
  let results = (outs I1:$last);
  let assemblyFormat = [{
    $counters `[` $index `]` `of` $count attr-dict `:` qualified(type($counters))
  }];
  let hasVerifier = 1;
}


def Tile_DiscardOp : Tile_Op<"discard"> {
  let summary = "the region's contents are dead: its cache lines may be dropped without a write-back";
  let description = [{
    `tile.discard %r` declares that nothing reads the elements of the global
    region `%r` again before they are next written: their values become
    indeterminate. On the GPU the block drops every 128-byte L2 line that
    lies wholly inside the region's in-bounds rows (`discard.global.L2`,
    sm_80 and later), so dirty data that is never read again is not written
    back to DRAM; lines shared with bytes outside the region are kept. On the
    CPU the floating-point elements are set to NaN, so that a read after the
    discard shows in the CPU backend's results. The block's threads take part
    together, as in a copy.

    `tile-legalize-atomics` uses it for the split strategy's partial slices:
    once the last block of a tile has summed them, they are dead.

    ```mlir
    tile.discard %slices : !tile.region<4x128x64xf32, global>
    ```
  }];
  let arguments = (ins Arg<Tile_RegionType, "", [MemWrite]>:$region);
  let assemblyFormat = "$region attr-dict `:` qualified(type($region))";
  let hasVerifier = 1;
}

def Tile_BarrierOp : Tile_Op<"barrier"> {
  let summary = "every thread of the block waits here (GPU lowering)";
  let description = [{
    Placed by `tile-place-barriers` between an op that writes a shared tile
    (or a global buffer) and a later op whose threads read or overwrite what
    other threads wrote. On the GPU it is `__syncthreads()`; on the CPU, where
    one program runs each block, it does nothing.

    ```mlir
    tile.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_WgmmaWaitOp : Tile_Op<"wgmma_wait"> {
  let summary = "waits for the warpgroup's wgmma groups in flight, all but the latest `pending` (GPU lowering)";
  let description = [{
    Placed by `tile-schedule-wgmma-waits`. A `tile.gemm` lowered to Hopper's
    asynchronous warpgroup mma (`tile.wgmma`) commits its wgmmas as one group
    and stays in flight after it; this op waits until at most `pending` of
    the groups committed before it are still running (`wgmma.wait_group`),
    so the groups complete in commit order, and lists the accumulators of the
    groups it waits for, which no read may move above it. On the mma.sync
    path of the same code, and on the CPU, it does nothing.

    ```mlir
    tile.wgmma_wait pending 1 (%acc_s) : memref<64x64xf32, #tile.space<fragment>>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$pending,
                       Variadic<AnyMemRef>:$accumulators);
  let assemblyFormat = [{
    `pending` $pending (` ` `(` $accumulators^ `)` `:` type($accumulators))? attr-dict
  }];
  let hasVerifier = 1;
}

def Tile_StageViewOp : Tile_Op<"stage_view", [Pure,
    AllTypesMatch<["tile", "result"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "one buffer of a multi-buffered shared tile (GPU lowering)";
  let description = [{
    Placed by `tile-expand-pipelines`. A shared tile that `tile-multi-buffer`
    gave `tile.stages` = S buffers holds S tiles of its type, one per stage
    of the software pipeline; this op is the tile in buffer `index` (0 <=
    index < S), which is what the ops of one iteration read or fill. Only
    the GPU lowering creates it; the CPU backend never sees it. The result
    prints as the tile's source name with `_stage` appended.

    ```mlir
    %a_s_stage = tile.stage_view %a_s[%stage] : memref<128x64xbf16, #tile.space<shared>>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$tile, Index:$index);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$tile `[` $index `]` attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_AsyncCopyOp : Tile_Op<"async_copy"> {
  let summary = "starts copying a global region into a shared tile without waiting (GPU lowering)";
  let description = [{
    Placed by `tile-expand-pipelines` for the copies a pipelined loop issues
    ahead of the iteration that reads them. Like `tile.copy` from a global
    tensor or region (same extents, same element type, reads past the tensor
    yield zero), but the data may land at any time until a later
    `tile.async_wait` lets the copy's group complete; the copy joins the
    group that the thread's next `tile.async_commit` closes. On the GPU these
    are `cp.async` 16-byte copies.

    ```mlir
    tile.async_copy %r, %a_n : !tile.region<128x64xbf16, global>, memref<128x64xbf16, #tile.space<shared>>
    ```
  }];
  let arguments = (ins Arg<Tile_TileLike, "", [MemRead]>:$source,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$target);
  let assemblyFormat = [{
    $source `,` $target attr-dict `:` qualified(type($source)) `,` qualified(type($target))
  }];
  let hasVerifier = 1;
}

def Tile_AsyncCommitOp : Tile_Op<"async_commit"> {
  let summary = "closes the thread's group of asynchronous copies (GPU lowering)";
  let description = [{
    Every `tile.async_copy` the thread issued since its previous commit forms
    one group (possibly empty); `tile.async_wait` counts groups. On the GPU,
    `cp.async.commit_group`.

    ```mlir
    tile.async_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_AsyncWaitOp : Tile_Op<"async_wait"> {
  let summary = "waits until at most `pending` of the thread's committed copy groups are in flight (GPU lowering)";
  let description = [{
    The thread's copy groups complete in commit order; after this op, every
    group but the latest `pending` has landed in shared memory, for this
    thread's copies (a `tile.barrier` after it makes every thread's visible
    to the block). `pending 0` waits for all of them. On the GPU,
    `cp.async.wait_group`.

    ```mlir
    tile.async_wait pending 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "`pending` $pending attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

// The loops have exactly the effects of their bodies (RecursiveMemoryEffects); a barrier and a launch declare none
// and so count as having every effect, which is what they are: nothing may move across them.
def Tile_ParallelOp : Tile_Op<"parallel", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "an element-wise loop nest over a tile's index space";
  let description = [{
    Runs its body once for every index in `[0, e0) x ... x [0, eN)`; the
    iterations are independent and may run in any order or all at once. The
    body reads and writes tile elements with `memref.load`/`memref.store` and
    computes with `arith` and `math`.

    ```mlir
    tile.parallel (%i, %j) in [64, 64] {
      %x = memref.load %s[%i, %j] : memref<64x64xf32, #tile.space<fragment>>
      ...
    }
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$extents);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::ArrayRef<int64_t>":$extents)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::ValueRange getInductionVars() { return getBodyBlock().getArguments(); }
  }];
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "a serial loop the GPU lowering may software-pipeline";
  let description = [{
    Iterates its body for `%n` from `lower` to `upper` (exclusive) in steps of
    one, in order. Iterations communicate only through memory; the GPU lowering
    may overlap the copies of up to `stages` iterations with the compute of the
    current one. At tile level it means exactly a sequential loop.

    ```mlir
    tile.pipelined %n = %lo to %hi stages 2 {
      ...
    }
    ```
  }];
  let arguments = (ins Index:$lower, Index:$upper, I64Attr:$stages);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$lower, "::mlir::Value":$upper,
                                 "int64_t":$stages)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getInductionVar() { return getBodyBlock().getArgument(0); }
  }];
}

#endif
