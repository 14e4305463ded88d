// tile.parallel and tile.pipelined: custom syntax, builders, verification.
#include "tilec/Dialect/Tile/IR/TileOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace tilec::tile;

//===----------------------------------------------------------------------===//
// ParallelOp:  tile.parallel (%i, %j) in [64, 128] { ... }
//===----------------------------------------------------------------------===//

void ParallelOp::build(OpBuilder &builder, OperationState &state,
                       ArrayRef<int64_t> extents) {
  state.addAttribute(getExtentsAttrName(state.name),
                     builder.getDenseI64ArrayAttr(extents));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (size_t i = 0; i < extents.size(); ++i)
    block->addArgument(builder.getIndexType(), state.location);
}

ParseResult ParallelOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> ivs;
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/false) ||
      parser.parseKeyword("in"))
    return failure();
  SmallVector<int64_t> extents;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(extents.emplace_back());
      }))
    return failure();
  result.addAttribute(getExtentsAttrName(result.name),
                      parser.getBuilder().getDenseI64ArrayAttr(extents));
  for (auto &iv : ivs)
    iv.type = parser.getBuilder().getIndexType();
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, ivs))
    return failure();
  if (body->empty())
    body->push_back(new Block());
  return success();
}

void ParallelOp::print(OpAsmPrinter &p) {
  p << " (";
  llvm::interleaveComma(getBodyBlock().getArguments(), p);
  p << ") in [";
  llvm::interleaveComma(getExtents(), p);
  p << ']';
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getExtentsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult ParallelOp::verifyRegions() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  ArrayRef<int64_t> extents = getExtents();
  if (extents.empty())
    return emitOpError() << "needs at least one extent";
  for (auto [i, e] : llvm::enumerate(extents))
    if (e <= 0)
      return emitOpError() << "extent #" << i << " must be positive, got " << e;
  Block &block = getBodyBlock();
  if (block.getNumArguments() != extents.size())
    return emitOpError() << "has " << extents.size() << " extents but "
                         << block.getNumArguments() << " induction variables";
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isIndex())
      return emitOpError() << "induction variables must be index, got "
                           << arg.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// PipelinedOp:  tile.pipelined %n = %lo to %hi stages 2 { ... }
//===----------------------------------------------------------------------===//

void PipelinedOp::build(OpBuilder &builder, OperationState &state, Value lower,
                        Value upper, int64_t stages) {
  state.addOperands({lower, upper});
  state.addAttribute(getStagesAttrName(state.name),
                     builder.getI64IntegerAttr(stages));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(builder.getIndexType(), state.location);
}

ParseResult PipelinedOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lower, upper;
  int64_t stages;
  Type index = parser.getBuilder().getIndexType();
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lower) || parser.parseKeyword("to") ||
      parser.parseOperand(upper) || parser.parseKeyword("stages") ||
      parser.parseInteger(stages) ||
      parser.resolveOperand(lower, index, result.operands) ||
      parser.resolveOperand(upper, index, result.operands))
    return failure();
  iv.type = index;
  result.addAttribute(getStagesAttrName(result.name),
                      parser.getBuilder().getI64IntegerAttr(stages));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, iv))
    return failure();
  if (body->empty())
    body->push_back(new Block());
  return success();
}

void PipelinedOp::print(OpAsmPrinter &p) {
  p << ' ' << getInductionVar() << " = " << getLower() << " to " << getUpper()
    << " stages " << getStages();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getStagesAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

LogicalResult PipelinedOp::verify() {
  if (!(*this)->getParentOfType<KernelOp>())
    return emitOpError() << "must be inside a tile.kernel";
  if (getStages() < 1)
    return emitOpError() << "stages must be at least 1, got " << getStages();
  return success();
}

LogicalResult PipelinedOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != 1 || !block.getArgument(0).getType().isIndex())
    return emitOpError() << "body must take exactly one index induction "
                            "variable";
  return success();
}
