#ifndef TILEC_DIALECT_TILE_IR_TILEPLANOPS_TD
#define TILEC_DIALECT_TILE_IR_TILEPLANOPS_TD

// Launch plans: the host side of a user-visible kernel after atomic
// legalization. A `tile.entry` is what the host calls; its body is a
// straight-line host program of workspace allocations, kernel launches and
// frees, whose sizes are computed from the entry's argument dims.

include "tilec/Dialect/Tile/IR/TileDialect.td"
include "tilec/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tile_EntryOp : Tile_Op<"entry", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a host-side entry point: the launch plan of a user kernel";
  let description = [{
    An entry has the signature the host sees (the user kernel's tensor
    arguments) and a body that runs on the host, in order: `tile.workspace`
    allocations, `tile.launch`es of `tile.kernel`s of the same module and
    `tile.free`s. Workspace sizes are index values computed from argument
    dims with `memref.dim` and index `arith` ops (constants, `addi`, `subi`,
    `muli`, `divsi`, `floordivsi`, `ceildivsi`, `remsi`, `minsi`, `maxsi`),
    which is exactly what the runtime's plan expressions can say. Every
    workspace is freed exactly once, after its last launch.

    ```mlir
    tile.entry @attn_bwd(%Q: memref<?x?x?x128xbf16, #tile.space<global>>, ...) {
      %c0 = arith.constant 0 : index
      %b = memref.dim %dQ, %c0 : memref<?x?x?x128xbf16, #tile.space<global>>
      ...
      %ws = tile.workspace [%b, %s, %h] : memref<?x?x?x128xf32, #tile.space<global>>
      tile.launch @attn_bwd_dQ_to_f32(%dQ, %ws) : (memref<...>, memref<...>)
      tile.launch @attn_bwd_main(%Q, ..., %ws, %dK, %dV) : (...)
      tile.launch @attn_bwd_dQ_from_f32(%ws, %dQ) : (memref<...>, memref<...>)
      tile.free %ws : memref<?x?x?x128xf32, #tile.space<global>>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::FunctionType":$type)>
  ];
  let extraClassDeclaration = [{
    unsigned getNumArguments() { return getFunctionType().getNumInputs(); }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::BlockArgument getArgument(unsigned i) {
      return getBodyBlock().getArgument(i);
    }
  }];
}

def Tile_WorkspaceOp : Tile_Op<"workspace", [
    HasParent<"EntryOp">,
    MemoryEffects<[MemAlloc<DefaultResource, 0, FullEffect>]>]> {
  let summary = "a device buffer that lives from here to its tile.free";
  let description = [{
    Allocates a global tensor for the launches of an entry, with one index
    operand per dynamic dimension of the result type. With `zeroed` its
    contents start at zero; otherwise they are undefined.

    ```mlir
    %p = tile.workspace [%b, %s, %kvh] zeroed : memref<2x?x?x?x128xf32, #tile.space<global>>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes, UnitAttr:$zeroed);
  let results = (outs Res<AnyMemRef, "", [MemAlloc]>:$result);
  let assemblyFormat = [{
    (` ` `[` $dynamic_sizes^ `]`)? (`zeroed` $zeroed^)? attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_LaunchOp : Tile_Op<"launch", [
    HasParent<"EntryOp">, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a tile.kernel over its whole grid";
  let description = [{
    Launches the `tile.kernel` named by `kernel` on `args`, which match the
    kernel's parameters one for one. The grid is the kernel's own grid map
    evaluated on these arguments' dims. Launches of one entry run in order,
    each seeing everything the previous ones wrote.

    ```mlir
    tile.launch @attn_bwd_main(%Q, %K, %V, %dO, %lse, %delta, %ws, %dK, %dV)
        : (memref<?x?x?x128xbf16, #tile.space<global>>, ...)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyType>:$args);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` `(` qualified(type($args)) `)`
  }];
}

def Tile_FreeOp : Tile_Op<"free", [
    HasParent<"EntryOp">,
    MemoryEffects<[MemFree<DefaultResource, 0, FullEffect>]>]> {
  let summary = "release a workspace of the entry";
  let description = [{
    ```mlir
    tile.free %ws : memref<?x?x?x128xf32, #tile.space<global>>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemFree]>:$workspace);
  let assemblyFormat = "$workspace attr-dict `:` qualified(type($workspace))";
  let hasVerifier = 1;
}

#endif
