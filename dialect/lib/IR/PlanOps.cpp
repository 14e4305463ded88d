// Launch plans: tile.entry (custom syntax, builder, verification),
// tile.workspace, tile.launch and tile.free.
//
//   tile.entry @name(%A: memref<?x128xbf16, #tile.space<global>>, ...)
//       attributes {...} {
//     %ws = tile.workspace [%n] zeroed : memref<?x128xf32, #tile.space<global>>
//     tile.launch @kernel(%A, %ws) : (memref<...>, memref<...>)
//     tile.free %ws : memref<?x128xf32, #tile.space<global>>
//   }
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace tilec::tile;

#define GET_OP_CLASSES
#include "tilec/Dialect/Tile/IR/TilePlanOps.cpp.inc"

//===----------------------------------------------------------------------===//
// EntryOp
//===----------------------------------------------------------------------===//

void EntryOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    FunctionType type) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type input : type.getInputs())
    block->addArgument(input, state.location);
}

ParseResult EntryOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/true) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  SmallVector<Type> inputs;
  for (auto &arg : args)
    inputs.push_back(arg.type);
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(parser.getBuilder().getFunctionType(inputs, {})));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  if (body->empty())
    body->push_back(new Block());
  return success();
}

void EntryOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << '(';
  Block &block = getBodyBlock();
  for (unsigned i = 0; i < block.getNumArguments(); ++i) {
    if (i)
      p << ", ";
    p.printRegionArgument(block.getArgument(i));
  }
  p << ')';
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {getSymNameAttrName(), getFunctionTypeAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

// Printed IR names the arguments after the source's (`tile.arg_names`).
void EntryOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  auto names = (*this)->getAttrOfType<ArrayAttr>("tile.arg_names");
  if (&region != &getBody() || region.empty() || !names)
    return;
  Block &block = region.front();
  for (unsigned i = 0; i < names.size() && i < block.getNumArguments(); ++i)
    if (auto name = dyn_cast<StringAttr>(names[i]))
      setNameFn(block.getArgument(i), name.getValue());
}

LogicalResult EntryOp::verify() {
  FunctionType type = getFunctionType();
  if (type.getNumResults() != 0)
    return emitOpError() << "entries return nothing; results are written into "
                            "argument tensors, got "
                         << type.getNumResults() << " results";
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    auto memref = dyn_cast<MemRefType>(input);
    if (!(memref ? getMemorySpaceOf(memref) == MemorySpace::Global
                 : input.isIntOrIndexOrFloat()))
      return emitOpError() << "argument #" << i
                           << " must be a global tensor (memref in "
                              "#tile.space<global>) or a scalar, got "
                           << input;
  }
  return success();
}

/// Index arithmetic that a runtime plan expression can say.
static bool isPlanArith(Operation *op) {
  if (!isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
           arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
           arith::RemSIOp, arith::MinSIOp, arith::MaxSIOp>(op))
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIndex(); });
}

LogicalResult EntryOp::verifyRegions() {
  Block &block = getBodyBlock();
  FunctionType type = getFunctionType();
  if (block.getNumArguments() != type.getNumInputs())
    return emitOpError() << "body must take the " << type.getNumInputs()
                         << " entry arguments, got " << block.getNumArguments()
                         << " block arguments";
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (block.getArgument(i).getType() != type.getInput(i))
      return emitOpError() << "body argument #" << i << " has type "
                           << block.getArgument(i).getType()
                           << " but the signature says " << type.getInput(i);

  // Workspace lifetimes, in program order: allocated, used by launches,
  // freed exactly once, never used after.
  llvm::DenseMap<Operation *, FreeOp> freed;
  for (Operation &op : block) {
    if (isa<WorkspaceOp, LaunchOp>(op) || isPlanArith(&op))
      ;
    else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(dim.getSource());
      if (!arg || arg.getOwner() != &block)
        return dim.emitOpError()
               << "in a tile.entry may only take dims of the entry's "
                  "arguments";
    } else if (!isa<FreeOp>(op)) {
      return op.emitOpError()
             << "is not allowed in a tile.entry, whose body holds only "
                "tile.workspace, tile.launch, tile.free and index "
                "arithmetic on argument dims";
    }
    for (Value operand : op.getOperands()) {
      auto ws = operand.getDefiningOp<WorkspaceOp>();
      if (!ws)
        continue;
      auto it = freed.find(ws);
      if (it != freed.end()) {
        InFlightDiagnostic diag =
            op.emitOpError() << "uses a workspace after its tile.free";
        diag.attachNote(it->second.getLoc()) << "freed here";
        return diag;
      }
    }
    if (auto free = dyn_cast<FreeOp>(op))
      if (auto ws = free.getWorkspace().getDefiningOp<WorkspaceOp>())
        freed[ws] = free;
  }
  for (Operation &op : block)
    if (auto ws = dyn_cast<WorkspaceOp>(op); ws && !freed.count(ws))
      return ws.emitOpError() << "is never freed; every workspace needs a "
                                 "tile.free after its last use";
  return success();
}

//===----------------------------------------------------------------------===//
// WorkspaceOp
//===----------------------------------------------------------------------===//

LogicalResult WorkspaceOp::verify() {
  MemRefType type = getType();
  if (getMemorySpaceOf(type) != MemorySpace::Global)
    return emitOpError() << "allocates global tensors (memref in "
                            "#tile.space<global>), got "
                         << type;
  if (!type.getLayout().isIdentity())
    return emitOpError() << "allocates dense row-major tensors; the result "
                            "type must have the identity layout, got "
                         << type;
  if (!type.getElementType().isIntOrFloat())
    return emitOpError() << "element type must be an integer or float, got "
                         << type.getElementType();
  int64_t dynamic = type.getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != dynamic)
    return emitOpError() << "takes one size per dynamic dimension: " << type
                         << " has " << dynamic << " but "
                         << getDynamicSizes().size() << " were given";
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *callee =
      symbolTable.lookupNearestSymbolFrom(*this, getKernelAttr());
  if (!callee)
    return emitOpError() << "launches " << getKernelAttr()
                         << ", which is not defined in this module";
  auto kernel = dyn_cast<KernelOp>(callee);
  if (!kernel)
    return emitOpError() << "launches " << getKernelAttr() << ", which is a '"
                         << callee->getName() << "', not a tile.kernel";
  FunctionType type = kernel.getFunctionType();
  if (getArgs().size() != type.getNumInputs())
    return emitOpError() << "passes " << getArgs().size()
                         << " arguments to " << getKernelAttr()
                         << ", which takes " << type.getNumInputs();
  for (auto [i, arg, expected] :
       llvm::enumerate(getArgs(), type.getInputs()))
    if (arg.getType() != expected)
      return emitOpError() << "argument #" << i << " has type "
                           << arg.getType() << " but " << getKernelAttr()
                           << " takes " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// FreeOp
//===----------------------------------------------------------------------===//

LogicalResult FreeOp::verify() {
  Operation *def = getWorkspace().getDefiningOp();
  if (!isa_and_nonnull<WorkspaceOp>(def))
    return emitOpError() << "frees only what tile.workspace allocated; the "
                            "operand is "
                         << (def ? "defined by '" + def->getName().getStringRef().str() + "'"
                                 : std::string("an argument of the entry"));
  for (Operation *user : getWorkspace().getUsers())
    if (user != *this && isa<FreeOp>(user) &&
        user->getBlock() == (*this)->getBlock() &&
        user->isBeforeInBlock(*this)) {
      InFlightDiagnostic diag = emitOpError() << "frees a workspace twice";
      diag.attachNote(user->getLoc()) << "first freed here";
      return diag;
    }
  return success();
}
