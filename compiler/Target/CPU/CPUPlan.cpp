// Launch plans on the CPU backend: a tile.entry read into host steps
// (workspace allocations, kernel launches, frees) and run in order.
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Target/CPU/CPURunner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;

namespace tilec::cpu {

static llvm::Error planError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}


llvm::Expected<EntryInfo> extractEntry(tile::EntryOp entry) {
  EntryInfo info;
  KernelInfo &sig = info.signature;
  sig.name = entry.getSymName().str();
  auto names = entry->getAttrOfType<ArrayAttr>("tile.arg_names");
  for (auto [i, t] : llvm::enumerate(entry.getFunctionType().getInputs())) {
    auto memref = dyn_cast<MemRefType>(t);
    std::optional<DType> dtype =
        memref ? dtypeOf(memref.getElementType()) : std::nullopt;
    if (!dtype)
      return planError("entry '" + sig.name + "': argument #" + llvm::Twine(i) +
                       " is not a tensor the CPU backend supports");
    sig.argTypes.push_back(*dtype);
    std::vector<int64_t> shape;
    for (int64_t d : memref.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    sig.argStaticShapes.push_back(shape);
    sig.argNames.push_back(names && i < names.size()
                               ? cast<StringAttr>(names[i]).str()
                               : ("#" + llvm::Twine(i)).str());
  }
  if (auto shapes = entry->getAttrOfType<ArrayAttr>("tile.arg_shapes"))
    for (Attribute a : shapes)
      sig.argShapes.push_back(cast<AffineMapAttr>(a).getValue());
  if (auto dims = entry->getAttrOfType<ArrayAttr>("tile.dim_names"))
    for (Attribute a : dims)
      sig.dimNames.push_back(cast<StringAttr>(a).str());

  llvm::DenseMap<Value, int> values, workspaces;
  auto valueOf = [&](Value v) -> int {
    auto it = values.find(v);
    return it == values.end() ? -1 : it->second;
  };
  for (Operation &op : entry.getBodyBlock()) {
    PlanValue pv;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      pv.op = PlanValue::Op::Const;
      pv.value = cast<IntegerAttr>(c.getValue()).getInt();
    } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> axis = getConstantIntValue(dim.getIndex());
      if (!axis)
        return planError("entry '" + sig.name +
                         "': memref.dim with a non-constant axis");
      pv.op = PlanValue::Op::Dim;
      pv.arg = cast<BlockArgument>(dim.getSource()).getArgNumber();
      pv.axis = *axis;
    } else if (auto ws = dyn_cast<tile::WorkspaceOp>(op)) {
      PlanStep step;
      step.kind = PlanStep::Kind::Alloc;
      step.workspace = info.workspaces++;
      std::optional<DType> dtype = dtypeOf(ws.getType().getElementType());
      if (!dtype)
        return planError("entry '" + sig.name + "': workspace element type "
                         "not supported on the CPU");
      step.dtype = *dtype;
      for (int64_t d : ws.getType().getShape())
        step.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
      for (Value v : ws.getDynamicSizes())
        step.dynamicSizes.push_back(valueOf(v));
      step.zeroed = ws.getZeroed();
      workspaces[ws.getResult()] = step.workspace;
      info.steps.push_back(std::move(step));
      continue;
    } else if (auto launch = dyn_cast<tile::LaunchOp>(op)) {
      PlanStep step;
      step.kind = PlanStep::Kind::Launch;
      step.kernel = launch.getKernel().str();
      for (Value a : launch.getArgs()) {
        if (auto arg = dyn_cast<BlockArgument>(a))
          step.args.push_back(arg.getArgNumber());
        else
          step.args.push_back(-(workspaces.lookup(a) + 1));
      }
      info.steps.push_back(std::move(step));
      continue;
    } else if (auto free = dyn_cast<tile::FreeOp>(op)) {
      PlanStep step;
      step.kind = PlanStep::Kind::Free;
      step.workspace = workspaces.lookup(free.getWorkspace());
      info.steps.push_back(std::move(step));
      continue;
    } else {
      using Op = PlanValue::Op;
      std::optional<Op> kind =
          llvm::TypeSwitch<Operation *, std::optional<Op>>(&op)
              .Case<arith::AddIOp>([](auto) { return Op::Add; })
              .Case<arith::SubIOp>([](auto) { return Op::Sub; })
              .Case<arith::MulIOp>([](auto) { return Op::Mul; })
              .Case<arith::DivSIOp>([](auto) { return Op::DivS; })
              .Case<arith::FloorDivSIOp>([](auto) { return Op::FloorDiv; })
              .Case<arith::CeilDivSIOp>([](auto) { return Op::CeilDiv; })
              .Case<arith::RemSIOp>([](auto) { return Op::RemS; })
              .Case<arith::MinSIOp>([](auto) { return Op::Min; })
              .Case<arith::MaxSIOp>([](auto) { return Op::Max; })
              .Default([](auto) { return std::nullopt; });
      if (!kind)
        return planError("entry '" + sig.name + "': unexpected '" +
                         op.getName().getStringRef() + "' in the plan");
      pv.op = *kind;
      pv.lhs = valueOf(op.getOperand(0));
      pv.rhs = valueOf(op.getOperand(1));
    }
    values[op.getResult(0)] = info.values.size();
    info.values.push_back(pv);
  }
  return info;
}

static std::string describeShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

llvm::Error CPUModule::runEntry(const EntryInfo &e,
                                std::vector<HostTensor *> args,
                                const RunOptions &options) {
  const KernelInfo &sig = e.signature;
  const std::string &name = sig.name;
  if (args.size() != sig.argTypes.size())
    return planError("entry '" + name + "' takes " +
                     llvm::Twine(sig.argTypes.size()) + " tensors, got " +
                     llvm::Twine(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &param = sig.argNames[i];
    if (!args[i])
      return planError("argument '" + param + "' is missing");
    if (args[i]->dtype != sig.argTypes[i])
      return planError("argument '" + param + "' must be " +
                       dtypeName(sig.argTypes[i]) + ", got " +
                       dtypeName(args[i]->dtype));
    if (args[i]->shape.size() != sig.argStaticShapes[i].size())
      return planError("argument '" + param + "' must have rank " +
                       llvm::Twine(sig.argStaticShapes[i].size()) + ", got " +
                       llvm::Twine(args[i]->shape.size()));
    for (size_t d = 0; d < args[i]->shape.size(); ++d) {
      int64_t expected = sig.argStaticShapes[i][d];
      if (args[i]->shape[d] < 0 ||
          (expected >= 0 && args[i]->shape[d] != expected))
        return planError("argument '" + param + "' dimension " +
                         llvm::Twine(d) + " must be " + llvm::Twine(expected) +
                         ", got " + llvm::Twine(args[i]->shape[d]));
    }
  }
  // Named dims: bound where each first appears alone, then checked
  // everywhere against the signature.
  std::vector<int64_t> symbols;
  std::vector<bool> bound;
  for (size_t i = 0; i < sig.argShapes.size() && i < args.size(); ++i)
    for (unsigned d = 0; d < sig.argShapes[i].getNumResults(); ++d)
      if (auto s = dyn_cast<AffineSymbolExpr>(sig.argShapes[i].getResult(d))) {
        unsigned p = s.getPosition();
        if (p >= symbols.size()) {
          symbols.resize(p + 1, 0);
          bound.resize(p + 1, false);
        }
        if (!bound[p]) {
          symbols[p] = args[i]->shape[d];
          bound[p] = true;
        }
      }
  if (llvm::all_of(bound, [](bool b) { return b; }))
    for (size_t i = 0; i < sig.argShapes.size() && i < args.size(); ++i)
      for (unsigned d = 0; d < sig.argShapes[i].getNumResults(); ++d) {
        int64_t expected = evaluateAffine(sig.argShapes[i].getResult(d), symbols);
        if (args[i]->shape[d] != expected)
          return planError("argument '" + sig.argNames[i] + "' dimension " +
                           llvm::Twine(d) + " is " +
                           llvm::Twine(args[i]->shape[d]) +
                           " but the signature says " + llvm::Twine(expected));
      }

  std::vector<int64_t> values(e.values.size());
  for (size_t i = 0; i < e.values.size(); ++i) {
    const PlanValue &v = e.values[i];
    int64_t l = v.lhs >= 0 ? values[v.lhs] : 0, r = v.rhs >= 0 ? values[v.rhs] : 0;
    bool divides = v.op == PlanValue::Op::DivS || v.op == PlanValue::Op::FloorDiv ||
                   v.op == PlanValue::Op::CeilDiv || v.op == PlanValue::Op::RemS;
    if (divides && r == 0)
      return planError("entry '" + name + "': division by zero in the plan");
    switch (v.op) {
    case PlanValue::Op::Const: values[i] = v.value; break;
    case PlanValue::Op::Dim: values[i] = args[v.arg]->shape[v.axis]; break;
    case PlanValue::Op::Add: values[i] = l + r; break;
    case PlanValue::Op::Sub: values[i] = l - r; break;
    case PlanValue::Op::Mul: values[i] = l * r; break;
    case PlanValue::Op::DivS: values[i] = l / r; break;
    case PlanValue::Op::FloorDiv:
      values[i] = l / r - ((l % r != 0) && ((l < 0) != (r < 0)));
      break;
    case PlanValue::Op::CeilDiv:
      values[i] = l / r + ((l % r != 0) && ((l < 0) == (r < 0)));
      break;
    case PlanValue::Op::RemS: values[i] = l % r; break;
    case PlanValue::Op::Min: values[i] = std::min(l, r); break;
    case PlanValue::Op::Max: values[i] = std::max(l, r); break;
    }
  }

  std::vector<std::unique_ptr<HostTensor>> workspaces(e.workspaces);
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const PlanStep &step = e.steps[s];
    switch (step.kind) {
    case PlanStep::Kind::Alloc: {
      std::vector<int64_t> shape = step.shape;
      size_t k = 0;
      for (int64_t &d : shape)
        if (d < 0)
          d = values[step.dynamicSizes[k++]];
      for (int64_t d : shape)
        if (d < 0)
          return planError("entry '" + name + "': workspace #" +
                           llvm::Twine(step.workspace) + " has shape " +
                           describeShape(shape));
      auto t = std::make_unique<HostTensor>(step.dtype, shape);
      if (!step.zeroed) // undefined contents: NaN bytes, so reads show up
        std::memset(t->bytes.data(), 0xff, t->bytes.size());
      workspaces[step.workspace] = std::move(t);
      break;
    }
    case PlanStep::Kind::Launch: {
      std::vector<HostTensor *> launchArgs;
      for (int a : step.args)
        launchArgs.push_back(a >= 0 ? args[a] : workspaces[-a - 1].get());
      RunOptions o = options;
      o.seed = options.seed + s;
      if (llvm::Error err = run(step.kernel, launchArgs, o))
        return planError("entry '" + name + "', launch of '" + step.kernel +
                         "': " + llvm::toString(std::move(err)));
      break;
    }
    case PlanStep::Kind::Free:
      workspaces[step.workspace].reset();
      break;
    }
  }
  return llvm::Error::success();
}

const EntryInfo *CPUModule::entry(llvm::StringRef name) const {
  for (auto &e : entryInfos)
    if (e.signature.name == name)
      return &e;
  return nullptr;
}

} // namespace tilec::cpu
