// tile.kernel: custom syntax, builder and verification.
//
//   tile.kernel @name(%A: memref<?x128xf32, #tile.space<global>>, ...)
//       grid(%A[0]) ()[s0] -> (s0 ceildiv 64) threads(128) as (%bx)
//       attributes {constants = {...}} {
//     ...
//   }
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace tilec::tile;

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type, AffineMap grid,
                     ArrayRef<std::pair<int64_t, int64_t>> gridDims,
                     int64_t threads) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(type));
  state.addAttribute(getGridAttrName(state.name), AffineMapAttr::get(grid));
  SmallVector<int64_t> flat;
  for (auto [arg, dim] : gridDims) {
    flat.push_back(arg);
    flat.push_back(dim);
  }
  state.addAttribute(getGridOperandsAttrName(state.name),
                     builder.getDenseI64ArrayAttr(flat));
  state.addAttribute(getThreadsAttrName(state.name),
                     builder.getI64IntegerAttr(threads));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type input : type.getInputs())
    block->addArgument(input, state.location);
  for (unsigned i = 0; i < grid.getNumResults(); ++i)
    block->addArgument(builder.getIndexType(), state.location);
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/true))
    return failure();
  unsigned numInputs = args.size();

  // grid(%A[0], %B[1]) <affine map>
  SmallVector<int64_t> gridOperands;
  auto parseGridOperand = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    int64_t dim;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseOperand(operand) || parser.parseLSquare() ||
        parser.parseInteger(dim) || parser.parseRSquare())
      return failure();
    auto it = llvm::find_if(args, [&](const OpAsmParser::Argument &a) {
      return a.ssaName.name == operand.name &&
             a.ssaName.number == operand.number;
    });
    if (it == args.end())
      return parser.emitError(loc) << "grid extent refers to " << operand.name
                                   << ", which is not a kernel argument";
    gridOperands.push_back(std::distance(args.begin(), it));
    gridOperands.push_back(dim);
    return success();
  };
  AffineMap grid;
  if (parser.parseKeyword("grid") ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren,
                                     parseGridOperand) ||
      parser.parseAffineMap(grid))
    return failure();
  result.addAttribute(getGridAttrName(result.name), AffineMapAttr::get(grid));
  result.addAttribute(getGridOperandsAttrName(result.name),
                      parser.getBuilder().getDenseI64ArrayAttr(gridOperands));

  int64_t threads;
  if (parser.parseKeyword("threads") || parser.parseLParen() ||
      parser.parseInteger(threads) || parser.parseRParen())
    return failure();
  result.addAttribute(getThreadsAttrName(result.name),
                      parser.getBuilder().getI64IntegerAttr(threads));

  // as (%x, %y): the block indices, one per grid extent.
  SmallVector<OpAsmParser::Argument> blockIndices;
  if (parser.parseKeyword("as") ||
      parser.parseArgumentList(blockIndices, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/false))
    return failure();
  Type index = parser.getBuilder().getIndexType();
  for (auto &arg : blockIndices)
    arg.type = index;

  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();

  SmallVector<Type> inputs;
  for (auto &arg : args)
    inputs.push_back(arg.type);
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(parser.getBuilder().getFunctionType(inputs, {})));

  args.append(blockIndices.begin(), blockIndices.end());
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  if (body->empty())
    body->push_back(new Block());
  (void)numInputs;
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << '(';
  Block &block = getBodyBlock();
  unsigned numInputs = getNumArguments();
  for (unsigned i = 0; i < numInputs; ++i) {
    if (i)
      p << ", ";
    p.printRegionArgument(block.getArgument(i));
  }
  p << ") grid(";
  for (unsigned i = 0, e = getGridOperands().size() / 2; i < e; ++i) {
    if (i)
      p << ", ";
    auto [arg, dim] = getGridSymbol(i);
    if (arg >= 0 && arg < numInputs)
      p << block.getArgument(arg);
    else
      p << "%<invalid>";
    p << '[' << dim << ']';
  }
  // Inline, never as an alias: the parser reads the map right here.
  p << ") ";
  getGrid().print(p.getStream());
  p << " threads(" << getThreads() << ") as (";
  for (unsigned i = 0; i < getGridRank(); ++i) {
    if (i)
      p << ", ";
    p << block.getArgument(numInputs + i);
  }
  p << ')';
  SmallVector<StringRef> elided = {
      getSymNameAttrName(), getFunctionTypeAttrName(), getGridAttrName(),
      getGridOperandsAttrName(), getThreadsAttrName()};
  if (getConstants().empty())
    elided.push_back(getConstantsAttrName());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), elided);
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

static bool isKernelArgumentType(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return getMemorySpaceOf(memref) == MemorySpace::Global;
  return type.isIntOrIndexOrFloat();
}

LogicalResult KernelOp::verify() {
  FunctionType type = getFunctionType();
  if (type.getNumResults() != 0)
    return emitOpError() << "kernels return nothing; results are written into "
                            "argument tensors, got "
                         << type.getNumResults() << " results";
  for (auto [i, input] : llvm::enumerate(type.getInputs()))
    if (!isKernelArgumentType(input))
      return emitOpError() << "argument #" << i
                           << " must be a global tensor (memref in "
                              "#tile.space<global>) or a scalar, got "
                           << input;
  AffineMap grid = getGrid();
  if (grid.getNumDims() != 0)
    return emitOpError() << "grid map must use symbols only (s0, s1, ...), "
                            "got "
                         << grid.getNumDims() << " dimensions";
  if (grid.getNumResults() < 1 || grid.getNumResults() > 3)
    return emitOpError() << "grid must have 1 to 3 extents, got "
                         << grid.getNumResults();
  ArrayRef<int64_t> operands = getGridOperands();
  if (operands.size() % 2 != 0 ||
      operands.size() / 2 != grid.getNumSymbols())
    return emitOpError() << "grid map has " << grid.getNumSymbols()
                         << " symbols but " << operands.size() / 2
                         << " argument dimensions are bound to them";
  for (unsigned i = 0; i < grid.getNumSymbols(); ++i) {
    auto [arg, dim] = getGridSymbol(i);
    if (arg < 0 || arg >= static_cast<int64_t>(type.getNumInputs()))
      return emitOpError() << "grid symbol s" << i << " refers to argument #"
                           << arg << ", but the kernel has "
                           << type.getNumInputs() << " arguments";
    auto memref = dyn_cast<MemRefType>(type.getInput(arg));
    if (!memref)
      return emitOpError() << "grid symbol s" << i << " takes a dimension of "
                           << "argument #" << arg << ", which is not a tensor";
    if (dim < 0 || dim >= memref.getRank())
      return emitOpError() << "grid symbol s" << i << " takes dimension "
                           << dim << " of argument #" << arg << ", which has "
                           << "rank " << memref.getRank();
  }
  int64_t threads = getThreads();
  if (threads <= 0 || threads > 1024 || threads % 32 != 0)
    return emitOpError() << "threads must be a multiple of 32 in [32, 1024], "
                            "got "
                         << threads;
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &block = getBodyBlock();
  FunctionType type = getFunctionType();
  unsigned expected = type.getNumInputs() + getGridRank();
  if (block.getNumArguments() != expected)
    return emitOpError() << "body must take the " << type.getNumInputs()
                         << " kernel arguments and " << getGridRank()
                         << " block indices, got " << block.getNumArguments()
                         << " block arguments";
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (block.getArgument(i).getType() != type.getInput(i))
      return emitOpError() << "body argument #" << i << " has type "
                           << block.getArgument(i).getType()
                           << " but the signature says " << type.getInput(i);
  for (unsigned i = 0; i < getGridRank(); ++i)
    if (!getBlockIndex(i).getType().isIndex())
      return emitOpError() << "block index #" << i << " must be an index";
  return success();
}

// Printed IR names arguments and block indices after the source's variables
// (`tile.arg_names`, `tile.index_names`, set by the front end) when known.
void KernelOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (&region != &getBody() || region.empty())
    return;
  Block &block = region.front();
  auto setFrom = [&](StringRef attrName, unsigned first, unsigned count) {
    auto names = (*this)->getAttrOfType<ArrayAttr>(attrName);
    if (!names)
      return;
    for (unsigned i = 0; i < count && i < names.size(); ++i)
      if (auto name = dyn_cast<StringAttr>(names[i]);
          name && first + i < block.getNumArguments())
        setNameFn(block.getArgument(first + i), name.getValue());
  };
  unsigned numInputs = getFunctionType().getNumInputs();
  setFrom("tile.arg_names", 0, numInputs);
  setFrom("tile.index_names", numInputs, getGridRank());
}

static Value buildAffine(OpBuilder &b, Location loc, AffineExpr e, ValueRange symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return arith::ConstantIndexOp::create(b, loc, c.getValue());
  if (auto sym = dyn_cast<AffineSymbolExpr>(e))
    return symbols[sym.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  Value l = buildAffine(b, loc, bin.getLHS(), symbols);
  Value r = buildAffine(b, loc, bin.getRHS(), symbols);
  switch (e.getKind()) {
  case AffineExprKind::Add: return arith::AddIOp::create(b, loc, l, r);
  case AffineExprKind::Mul: return arith::MulIOp::create(b, loc, l, r);
  case AffineExprKind::FloorDiv: return arith::FloorDivSIOp::create(b, loc, l, r);
  case AffineExprKind::CeilDiv: return arith::CeilDivSIOp::create(b, loc, l, r);
  case AffineExprKind::Mod: return arith::RemSIOp::create(b, loc, l, r);
  default: llvm_unreachable("a grid map has symbols only (the verifier checks it)");
  }
}

SmallVector<Value> KernelOp::buildGridExtents(OpBuilder &b, Location loc, ValueRange symbols) {
  SmallVector<Value> extents;
  for (AffineExpr e : getGrid().getResults())
    extents.push_back(buildAffine(b, loc, e, symbols));
  return extents;
}
