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
      std::function<std::optional<Expr>(AffineExpr)> lower =
          [&](AffineExpr e) -> std::optional<Expr> {
        if (auto c = dyn_cast<AffineConstantExpr>(e))
          return Expr(c.getValue());
        if (auto s = dyn_cast<AffineSymbolExpr>(e))
          return symbols[s.getPosition()];
        auto bin = dyn_cast<AffineBinaryOpExpr>(e);
        if (!bin)
          return std::nullopt;
        std::optional<Expr> l = lower(bin.getLHS()), r = lower(bin.getRHS());
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
      };
      AffineMap grid = kernel.getGrid();
      for (unsigned i = 0; i < grid.getNumResults() && i < 3; ++i) {
        std::optional<Expr> e = lower(grid.getResult(i));
        if (!e)
          return lowerError(entry, "grid extent of @" + step.function +
                                       " has no plan expression");
        step.grid[i] = *e;
      }
      for (Value a : launch.getArgs()) {
        if (auto arg = dyn_cast<BlockArgument>(a))
          step.args.push_back(runtime::KernelArg::tensor(arg.getArgNumber()));
        else if (workspaces.count(a))
          step.args.push_back(runtime::KernelArg::workspace(workspaces[a].id));
        else
          return lowerError(entry, "a launch argument is neither an entry "
                                   "argument nor a workspace");
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

} // namespace tilec
