// tile.entry -> runtime::LaunchPlan.
#include "tilec/Target/Plan/EntryToPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using tilec::runtime::Expr;

namespace tilec {

static llvm::Error lowerError(tile::EntryOp entry, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "entry '" + entry.getSymName() + "': " +
                                     message);
}

/// An affine expression as a runtime Expr, each symbol given by `symbol` (nothing if a symbol or an operation has
/// no Expr form).
static std::optional<Expr>
affineToExpr(AffineExpr e, llvm::function_ref<std::optional<Expr>(unsigned)> symbol) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return Expr(c.getValue());
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbol(s.getPosition());
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<Expr> l = affineToExpr(bin.getLHS(), symbol);
  std::optional<Expr> r = affineToExpr(bin.getRHS(), symbol);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add: return *l + *r;
  case AffineExprKind::Mul: return *l * *r;
  case AffineExprKind::FloorDiv: return floordiv(*l, *r);
  case AffineExprKind::CeilDiv: return ceildiv(*l, *r);
  case AffineExprKind::Mod: return mod(*l, *r);
  default: return std::nullopt;
  }
}

llvm::Expected<runtime::LaunchPlan> lowerEntryToPlan(tile::EntryOp entry,
                                                     int cubin) {
  runtime::LaunchPlan plan;
  llvm::DenseMap<Value, Expr> values;
  struct Workspace {
    int id;
    SmallVector<Expr> dims;
  };
  llvm::DenseMap<Value, Workspace> workspaces;

  // The extent of axis `axis` of a launch argument.
  auto dimOf = [&](Value v, int64_t axis) -> std::optional<Expr> {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return Expr::dim(arg.getArgNumber(), static_cast<int>(axis));
    auto it = workspaces.find(v);
    if (it == workspaces.end() || axis >= (int64_t)it->second.dims.size())
      return std::nullopt;
    return it->second.dims[axis];
  };

  for (Operation &op : entry.getBodyBlock()) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      values[c.getResult()] = Expr(cast<IntegerAttr>(c.getValue()).getInt());
    } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> axis = getConstantIntValue(dim.getIndex());
      if (!axis)
        return lowerError(entry, "memref.dim with a non-constant axis");
      values[dim.getResult()] = Expr::dim(
          cast<BlockArgument>(dim.getSource()).getArgNumber(), *axis);
    } else if (auto ws = dyn_cast<tile::WorkspaceOp>(op)) {
      MemRefType type = ws.getType();
      Workspace w;
      Expr bytes(static_cast<int64_t>((type.getElementTypeBitWidth() + 7) / 8));
      unsigned k = 0;
      for (int64_t d : type.getShape()) {
        Expr e = ShapedType::isDynamic(d) ? values.lookup(ws.getDynamicSizes()[k++])
                                          : Expr(d);
        w.dims.push_back(e);
        bytes = bytes * e;
      }
      w.id = plan.alloc(bytes, ws.getZeroed());
      workspaces[ws.getResult()] = w;
    } else if (auto launch = dyn_cast<tile::LaunchOp>(op)) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<tile::KernelOp>(
          entry, launch.getKernelAttr());
      if (!kernel)
        return lowerError(entry, "launches @" + launch.getKernel() +
                                     ", which is not a tile.kernel");
      runtime::LaunchStep step;
      step.cubin = cubin;
      step.function = kernel.getSymName().str();
      step.block = {static_cast<unsigned>(kernel.getThreads()), 1, 1};
      if (auto smem = kernel->getAttrOfType<IntegerAttr>("tile.shared_bytes"))
        step.dynamicSharedBytes = Expr(smem.getInt());
      SmallVector<Expr> symbols;
      for (unsigned s = 0; s < kernel.getGrid().getNumSymbols(); ++s) {
        auto [arg, axis] = kernel.getGridSymbol(s);
        std::optional<Expr> e = dimOf(launch.getArgs()[arg], axis);
        if (!e)
          return lowerError(entry, "grid of @" + step.function +
                                       " needs a dim the plan does not know");
        symbols.push_back(*e);
      }
      auto lower = [&](AffineExpr e) {
        return affineToExpr(e, [&](unsigned s) -> std::optional<Expr> { return symbols[s]; });
      };
      AffineMap grid = kernel.getGrid();
      for (unsigned i = 0; i < grid.getNumResults() && i < 3; ++i) {
        std::optional<Expr> e = lower(grid.getResult(i));
        if (!e)
          return lowerError(entry, "grid extent of @" + step.function +
                                       " has no plan expression");
        step.grid[i] = *e;
      }
      // Each tensor's data pointer, then its dynamic extents as i64: the
      // parameter order the CUDA emitter gives every kernel.
      for (Value a : launch.getArgs()) {
        if (auto arg = dyn_cast<BlockArgument>(a))
          step.args.push_back(runtime::KernelArg::tensor(arg.getArgNumber()));
        else if (workspaces.count(a))
          step.args.push_back(runtime::KernelArg::workspace(workspaces[a].id));
        else
          return lowerError(entry, "a launch argument is neither an entry "
                                   "argument nor a workspace");
        auto type = cast<MemRefType>(a.getType());
        for (int64_t axis = 0; axis < type.getRank(); ++axis) {
          if (!ShapedType::isDynamic(type.getDimSize(axis)))
            continue;
          std::optional<Expr> e = dimOf(a, axis);
          if (!e)
            return lowerError(entry, "a dynamic extent of a launch argument "
                                     "has no plan expression");
          step.args.push_back(runtime::KernelArg::i64(*e));
        }
      }
      plan.launch(std::move(step));
    } else if (auto free = dyn_cast<tile::FreeOp>(op)) {
      plan.free(workspaces[free.getWorkspace()].id);
    } else {
      Value l = op.getOperand(0), r = op.getOperand(1);
      Expr a = values.lookup(l), b = values.lookup(r);
      std::optional<Expr> e =
          llvm::TypeSwitch<Operation *, std::optional<Expr>>(&op)
              .Case<arith::AddIOp>([&](auto) { return a + b; })
              .Case<arith::SubIOp>([&](auto) { return a - b; })
              .Case<arith::MulIOp>([&](auto) { return a * b; })
              .Case<arith::DivSIOp, arith::FloorDivSIOp>(
                  [&](auto) { return floordiv(a, b); })
              .Case<arith::CeilDivSIOp>([&](auto) { return ceildiv(a, b); })
              .Case<arith::RemSIOp>([&](auto) { return mod(a, b); })
              .Case<arith::MinSIOp>([&](auto) { return min(a, b); })
              .Case<arith::MaxSIOp>([&](auto) { return max(a, b); })
              .Default([](auto) { return std::nullopt; });
      if (!e)
        return lowerError(entry, "'" + op.getName().getStringRef() +
                                     "' has no plan expression");
      values[op.getResult(0)] = *e;
    }
  }
  return plan;
}

static std::optional<runtime::DType> runtimeDType(Type t) {
  if (t.isBF16()) return runtime::DType::BF16;
  if (t.isF16()) return runtime::DType::F16;
  if (t.isF32()) return runtime::DType::F32;
  if (t.isF64()) return runtime::DType::F64;
  if (t.isInteger(1)) return runtime::DType::Bool;
  if (t.isSignlessInteger(8)) return runtime::DType::I8;
  if (t.isSignlessInteger(32)) return runtime::DType::I32;
  if (t.isSignlessInteger(64)) return runtime::DType::I64;
  if (t.isUnsignedInteger(8)) return runtime::DType::U8;
  return std::nullopt;
}

/// A derived dimension's affine expression over the named dims, as a runtime Expr over their names.
static std::optional<Expr> derivedDim(AffineExpr e, ArrayAttr dimNames) {
  return affineToExpr(e, [&](unsigned s) -> std::optional<Expr> {
    if (!dimNames || s >= dimNames.size())
      return std::nullopt;
    return Expr::symbol(cast<StringAttr>(dimNames[s]).str());
  });
}

llvm::Expected<runtime::Signature> lowerSignature(Operation *op,
                                                  FunctionType type) {
  auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + (name ? name.getValue() : "?") +
                                       "': " + message);
  };
  auto names = op->getAttrOfType<ArrayAttr>("tile.arg_names");
  auto shapes = op->getAttrOfType<ArrayAttr>("tile.arg_shapes");
  auto dimNames = op->getAttrOfType<ArrayAttr>("tile.dim_names");
  std::vector<runtime::ParamSpec> params;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto memref = dyn_cast<MemRefType>(t);
    std::optional<runtime::DType> dtype =
        memref ? runtimeDType(memref.getElementType()) : std::nullopt;
    if (!dtype)
      return fail("argument #" + llvm::Twine(i) +
                  " is not a tensor of a dtype the runtime supports");
    runtime::ParamSpec param;
    param.name = names && i < names.size()
                     ? cast<StringAttr>(names[i]).str()
                     : ("arg" + llvm::Twine(i)).str();
    param.dtype = *dtype;
    AffineMap shape;
    if (shapes && i < shapes.size())
      if (auto map = dyn_cast<AffineMapAttr>(shapes[i]))
        shape = map.getValue();
    for (auto [axis, extent] : llvm::enumerate(memref.getShape())) {
      runtime::DimSpec dim = runtime::DimSpec::any();
      if (!ShapedType::isDynamic(extent))
        dim = runtime::DimSpec(extent);
      else if (shape && axis < shape.getNumResults()) {
        AffineExpr e = shape.getResult(axis);
        if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
          if (dimNames && s.getPosition() < dimNames.size())
            dim = runtime::DimSpec(
                cast<StringAttr>(dimNames[s.getPosition()]).str());
        } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
          dim = runtime::DimSpec(c.getValue());
        } else if (std::optional<Expr> derived = derivedDim(e, dimNames)) {
          // Checked at launch (Signature::check): `heads / groups` heads of K, with groups dividing heads.
          dim = runtime::DimSpec::derived(std::move(*derived));
        }
      }
      param.dims.push_back(dim);
    }
    params.push_back(std::move(param));
  }
  // Checked here: the Signature constructor throws, and this library is
  // built without exceptions. Alignment is the default (16, a power of two).
  for (const runtime::ParamSpec &param : params)
    if (param.dims.size() > size_t(runtime::TensorView::kMaxRank))
      return fail("argument '" + param.name + "' has rank " +
                  llvm::Twine(param.dims.size()) + ", more than the runtime's " +
                  llvm::Twine(runtime::TensorView::kMaxRank));
  return runtime::Signature(std::move(params));
}

llvm::Expected<runtime::Signature> lowerEntrySignature(tile::EntryOp entry) {
  return lowerSignature(entry, entry.getFunctionType());
}

llvm::Expected<runtime::EntrySpec> lowerEntry(tile::EntryOp entry, int cubin) {
  runtime::EntrySpec spec;
  spec.name = entry.getSymName().str();
  auto signature = lowerEntrySignature(entry);
  if (!signature)
    return signature.takeError();
  spec.signature = std::move(*signature);
  auto plan = lowerEntryToPlan(entry, cubin);
  if (!plan)
    return plan.takeError();
  spec.plan = std::move(*plan);
  return spec;
}

llvm::Expected<std::vector<runtime::EntrySpec>>
lowerEntries(mlir::ModuleOp module, int cubin) {
  std::vector<runtime::EntrySpec> entries;
  for (auto entry : module.getOps<tile::EntryOp>()) {
    auto spec = lowerEntry(entry, cubin);
    if (!spec)
      return spec.takeError();
    entries.push_back(std::move(*spec));
  }
  return entries;
}

} // namespace tilec
