// MLIRGen, part 1: the module, kernels (signature, compile-time constants, named and derived dims, grid) and
// the helpers the other parts share. Statements are in MLIRGenStmt.cpp, the whole-tile builtins in
// MLIRGenTileOps.cpp, expressions in MLIRGenExpr.cpp.
#include "MLIRGenImpl.h"

#include "tilec/runtime/Arch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tilec::frontend;
namespace tile = tilec::tile;

void tilec::frontend::loadFrontendDialects(MLIRContext &context) {
  context.loadDialect<tile::TileDialect, arith::ArithDialect,
                      math::MathDialect, memref::MemRefDialect,
                      scf::SCFDialect, func::FuncDialect>();
}

std::optional<GpuTarget> tilec::frontend::parseGpuTarget(llvm::StringRef arch) {
  std::optional<runtime::ArchName> name = runtime::parseArch(arch, "sm_");
  if (!name)
    return std::nullopt;
  GpuTarget target;
  target.sm = name->number;
  target.wgmma = name->number == 90 && name->suffix == 'a';
  return target;
}

OwningOpRef<ModuleOp>
tilec::frontend::generateMLIR(MLIRContext &context, const Program &program,
                              Diagnostics &diag, const GenOptions &options,
                              llvm::StringRef filename) {
  loadFrontendDialects(context);
  MLIRGen gen(context, diag, options, filename);
  return gen.generate(program);
}

OwningOpRef<ModuleOp> MLIRGen::generate(const Program &program) {
  OwningOpRef<ModuleOp> owned =
      ModuleOp::create(builder, FileLineColLoc::get(&context, filename, 1, 1));
  module = *owned;
  bool found = options.kernel.empty();
  llvm::StringMap<llvm::SMRange> seen;
  for (auto &kernel : program.kernels) {
    auto [it, inserted] = seen.try_emplace(kernel->name, kernel->nameRange);
    if (!inserted) {
      error(kernel->nameRange, "kernel '" + kernel->name + "' is defined twice");
      diag.note(it->second, "first defined here");
      continue;
    }
    if (!options.kernel.empty() && kernel->name != options.kernel)
      continue;
    found = true;
    generateKernel(*kernel);
  }
  if (!found) {
    std::string names;
    for (auto &k : program.kernels)
      names += (names.empty() ? "" : ", ") + k->name;
    diag.getSourceMgr();
    llvm::errs() << "error: no kernel named '" << options.kernel << "'"
                 << (names.empty() ? std::string(" (the file has none)")
                                   : " (the file has: " + names + ")")
                 << "\n";
    return nullptr;
  }
  // -D for a constant no generated kernel declares is a typo, not a no-op.
  for (auto &[name, value] : options.defines) {
    bool used = false;
    for (auto &k : program.kernels)
      if (options.kernel.empty() || k->name == options.kernel)
        for (auto &c : k->constParams)
          used |= c.name == name;
    if (!used) {
      llvm::errs() << "error: -D " << name << "=" << value
                   << " does not name a compile-time constant of "
                   << (options.kernel.empty() ? std::string("any kernel")
                                              : "kernel '" + options.kernel + "'")
                   << "\n";
      return nullptr;
    }
  }
  if (diag.hasErrors())
    return nullptr;
  return owned;
}

Location MLIRGen::loc(llvm::SMLoc at) {
  if (!at.isValid())
    return FileLineColLoc::get(&context, filename, 0, 0);
  auto [line, col] = diag.getSourceMgr().getLineAndColumn(at);
  return FileLineColLoc::get(&context, filename, line, col);
}

Type MLIRGen::dtype(llvm::StringRef name, llvm::SMRange at) {
  Type t = llvm::StringSwitch<Type>(name)
               .Case("bf16", builder.getBF16Type())
               .Case("f16", builder.getF16Type())
               .Case("f32", builder.getF32Type())
               .Case("i32", builder.getI32Type())
               .Case("bool", builder.getI1Type())
               .Default(Type());
  if (!t)
    error(at, "unknown dtype '" + name + "'; expected bf16, f16, f32, i32 or bool");
  return t;
}

const Binding *MLIRGen::lookup(llvm::StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

bool MLIRGen::define(llvm::StringRef name, Val val, llvm::SMRange at) {
  if (const Binding *prior = lookup(name)) {
    error(at, "'" + name + "' is already defined; names are bound once");
    if (prior->definedAt.Start.isValid())
      diag.note(prior->definedAt, "previous definition is here");
    return false;
  }
  scopes.back()[name] = Binding{std::move(val), at};
  return true;
}

bool MLIRGen::checkArgs(const CallExpr &call, unsigned minArgs,
                        unsigned maxArgs,
                        llvm::ArrayRef<llvm::StringRef> keywords,
                        llvm::StringRef signature) {
  unsigned n = call.args.size();
  if (n < minArgs || n > maxArgs) {
    error(call.getRange(), llvm::Twine(call.callee) + "() takes " +
                               (minArgs == maxArgs
                                    ? llvm::Twine(minArgs)
                                    : llvm::Twine(minArgs) + " to " +
                                          llvm::Twine(maxArgs)) +
                               " positional arguments (" + signature +
                               "), got " + llvm::Twine(n));
    return false;
  }
  for (auto &kw : call.kwargs) {
    if (!llvm::is_contained(keywords, kw.name)) {
      error(kw.nameRange, call.callee + "() has no argument named '" +
                              kw.name + "'");
      return false;
    }
    unsigned count = 0;
    for (auto &other : call.kwargs)
      count += other.name == kw.name;
    if (count > 1) {
      error(kw.nameRange, "argument '" + kw.name + "' is given twice");
      return false;
    }
  }
  return true;
}

const KeywordArg *MLIRGen::keyword(const CallExpr &call, llvm::StringRef name) {
  for (auto &kw : call.kwargs)
    if (kw.name == name)
      return &kw;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {
/// A tensor dimension named by an identifier: dynamic, bound at launch to
/// dimension `dim` of parameter `param`.
struct NamedDim {
  std::string name;
  unsigned param, dim;
};
} // namespace

static std::optional<Val> parseDefine(llvm::StringRef type,
                                      llvm::StringRef text) {
  if (type == "bool") {
    if (text == "true" || text == "1")
      return Val::constBool(true);
    if (text == "false" || text == "0")
      return Val::constBool(false);
    return std::nullopt;
  }
  if (type == "int") {
    int64_t v;
    if (text.getAsInteger(10, v))
      return std::nullopt;
    return Val::constInt(v);
  }
  double d;
  if (text.getAsDouble(d))
    return std::nullopt;
  return Val::constFloat(d);
}

bool MLIRGen::bindConstants(const Kernel &kernel,
                            SmallVectorImpl<NamedAttribute> &attrs) {
  bool ok = true;
  for (auto &param : kernel.constParams) {
    Val value;
    auto define = options.defines.find(param.name);
    if (define != options.defines.end()) {
      auto parsed = parseDefine(param.type, define->second);
      if (!parsed) {
        error(param.range, "-D " + param.name + "=" + define->second +
                               ": not a valid " + param.type);
        ok = false;
        if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
        continue;
      }
      value = *parsed;
    } else if (param.defaultValue) {
      value = expr(*param.defaultValue);
      if (value.isPoison()) {
        ok = false;
        if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
        continue;
      }
      if (!value.isConst()) {
        error(param.defaultValue->getRange(),
              "default of '" + param.name + "' must be a compile-time constant");
        ok = false;
        if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
        continue;
      }
    } else {
      error(param.range, "compile-time constant '" + param.name +
                             "' has no default; pass -D " + param.name +
                             "=VALUE");
      ok = false;
      if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
      continue;
    }
    // Convert to the declared type.
    if (param.type == "int" && value.kind != Val::Kind::ConstInt) {
      error(param.defaultValue ? param.defaultValue->getRange() : param.range,
            "'" + param.name + "' is an int but its value is " +
                describeVal(value));
      ok = false;
      if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
      continue;
    }
    if (param.type == "bool" && value.kind != Val::Kind::ConstBool) {
      error(param.defaultValue ? param.defaultValue->getRange() : param.range,
            "'" + param.name + "' is a bool but its value is " +
                describeVal(value));
      ok = false;
      if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
      continue;
    }
    if (param.type == "float" && value.kind == Val::Kind::ConstInt)
      value = Val::constFloat(static_cast<double>(value.intValue));
    if (param.type == "float" && value.kind != Val::Kind::ConstFloat) {
      error(param.range, "'" + param.name + "' is a float but its value is " +
                             describeVal(value));
      ok = false;
      if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
      continue;
    }
    if (!this->define(param.name, value, param.range)) {
      ok = false;
      if (!lookup(param.name))
          this->define(param.name, Val::poison(), param.range);
      continue;
    }
    Attribute attr;
    if (value.kind == Val::Kind::ConstInt)
      attr = builder.getI64IntegerAttr(value.intValue);
    else if (value.kind == Val::Kind::ConstFloat)
      attr = builder.getF64FloatAttr(value.floatValue);
    else
      attr = builder.getBoolAttr(value.boolValue);
    attrs.push_back(builder.getNamedAttr(param.name, attr));
  }
  return ok;
}

namespace {
/// Turns an expression over named dimensions and constants into an affine
/// expression (grid extents, derived tensor dimensions).
class AffineBuilder {
public:
  AffineBuilder(MLIRGen &gen, llvm::ArrayRef<NamedDim> dims,
                llvm::StringRef what)
      : gen(gen), dims(dims), what(what) {}

  std::optional<AffineExpr> build(const Expr &e) {
    MLIRContext *ctx = &gen.context;
    if (auto *i = llvm::dyn_cast<IntExpr>(&e))
      return getAffineConstantExpr(i->value, ctx);
    if (auto *n = llvm::dyn_cast<NameExpr>(&e)) {
      for (auto [i, d] : llvm::enumerate(dims))
        if (d.name == n->name)
          return getAffineSymbolExpr(i, ctx);
      if (const Binding *b = gen.lookup(n->name)) {
        if (b->val.kind == Val::Kind::ConstInt)
          return getAffineConstantExpr(b->val.intValue, ctx);
        if (b->val.isPoison())
          return std::nullopt;
        return fail(e, "'" + n->name + "' is " + describeVal(b->val) +
                           ", not an integer");
      }
      return fail(e, "'" + n->name + "' is not a dimension of any tensor "
                     "parameter nor a compile-time constant");
    }
    if (auto *u = llvm::dyn_cast<UnaryExpr>(&e)) {
      if (u->op != UnaryOp::Neg)
        return fail(e, "'not' has no place in " + what);
      auto inner = build(*u->operand);
      if (!inner)
        return std::nullopt;
      if (magnitude(*inner) > uint64_t(INT64_MAX))
        return fail(e, "integer overflow in " + what);
      return -*inner;
    }
    if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) {
      auto lhs = build(*b->lhs);
      if (!lhs)
        return std::nullopt;
      auto rhs = build(*b->rhs);
      if (!rhs)
        return std::nullopt;
      // MLIR folds constants and coefficients with wrapping int64 arithmetic: refuse results whose coefficients
      // could leave the int64 range (a wrapped coefficient reads as a plausible, wrong shape).
      uint64_t ml = magnitude(*lhs), mr = magnitude(*rhs), bound;
      bool overflow = b->op == BinaryOp::Mul ? __builtin_mul_overflow(ml, mr, &bound)
                                             : __builtin_add_overflow(ml, mr, &bound);
      if (overflow || bound > uint64_t(INT64_MAX))
        return fail(e, "integer overflow in " + what);
      switch (b->op) {
      case BinaryOp::Add: return *lhs + *rhs;
      case BinaryOp::Sub: return *lhs - *rhs;
      case BinaryOp::Mul:
        if (!lhs->isSymbolicOrConstant() || (!llvm::isa<AffineConstantExpr>(*lhs) &&
                                             !llvm::isa<AffineConstantExpr>(*rhs)))
          return fail(e, what + " may multiply by constants only");
        return *lhs * *rhs;
      case BinaryOp::Div:
      case BinaryOp::Rem: {
        auto c = llvm::dyn_cast<AffineConstantExpr>(*rhs);
        if (!c || c.getValue() <= 0)
          return fail(*b->rhs, what + " may divide only by a positive constant");
        return b->op == BinaryOp::Div ? lhs->floorDiv(*rhs) : (*lhs % *rhs);
      }
      default:
        return fail(e, llvm::Twine("'") + binaryOpSpelling(b->op) +
                           "' has no place in " + what);
      }
    }
    if (auto *c = llvm::dyn_cast<CallExpr>(&e)) {
      if (c->callee == "cdiv" && c->args.size() == 2 && c->kwargs.empty()) {
        auto lhs = build(*c->args[0]);
        if (!lhs)
          return std::nullopt;
        auto rhs = build(*c->args[1]);
        if (!rhs)
          return std::nullopt;
        auto k = llvm::dyn_cast<AffineConstantExpr>(*rhs);
        if (!k || k.getValue() <= 0)
          return fail(*c->args[1], what + " may divide only by a positive constant");
        return lhs->ceilDiv(*rhs);
      }
      return fail(e, "only cdiv(a, constant) may be called in " + what);
    }
    return fail(e, what + " must be an integer expression of tensor "
                   "dimensions and constants");
  }

private:
  /// An upper bound on the absolute value of every constant and coefficient of `e` (saturating at 2^64 - 1).
  static uint64_t magnitude(AffineExpr e) {
    constexpr uint64_t kMax = ~uint64_t(0);
    if (auto c = llvm::dyn_cast<AffineConstantExpr>(e)) {
      int64_t v = c.getValue();
      return v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    }
    auto bin = llvm::dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return 1; // a symbol
    uint64_t l = magnitude(bin.getLHS()), r = magnitude(bin.getRHS()), out;
    switch (e.getKind()) {
    case AffineExprKind::Add:
      return __builtin_add_overflow(l, r, &out) ? kMax : out;
    case AffineExprKind::Mul:
      return __builtin_mul_overflow(l, r, &out) ? kMax : out;
    default: // floordiv, ceildiv, mod by a positive constant
      return std::max(l, r);
    }
  }

  std::optional<AffineExpr> fail(const Expr &e, const llvm::Twine &message) {
    gen.error(e.getRange(), message);
    return std::nullopt;
  }
  MLIRGen &gen;
  llvm::ArrayRef<NamedDim> dims;
  std::string what;
};
} // namespace

void MLIRGen::generateKernel(const Kernel &kernel) {
  unsigned errorsBefore = diag.errorCount();
  scopes.clear();
  pushScope();
  SmallVector<NamedAttribute> constants;
  bindConstants(kernel, constants);

  // Identifiers that stand alone as a tensor dimension name a dynamic dim.
  SmallVector<NamedDim> namedDims;
  for (auto [p, param] : llvm::enumerate(kernel.params)) {
    if (param.dims.empty())
      error(param.range, "tensor '" + param.name + "' needs at least one dimension");
    for (auto [d, dimExpr] : llvm::enumerate(param.dims)) {
      auto *n = llvm::dyn_cast<NameExpr>(dimExpr.get());
      if (!n || lookup(n->name))
        continue;
      if (llvm::none_of(namedDims, [&](auto &x) { return x.name == n->name; }))
        namedDims.push_back({n->name, static_cast<unsigned>(p),
                             static_cast<unsigned>(d)});
    }
  }

  SmallVector<Type> inputs;
  SmallVector<Attribute> argShapes;
  for (auto &param : kernel.params) {
    Type element = dtype(param.dtype, param.dtypeRange);
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> dimExprs;
    AffineBuilder affine(*this, namedDims, "a tensor dimension");
    for (auto &dimExpr : param.dims) {
      auto e = affine.build(*dimExpr);
      if (!e) {
        shape.push_back(ShapedType::kDynamic);
        continue;
      }
      if (auto c = llvm::dyn_cast<AffineConstantExpr>(*e)) {
        if (c.getValue() <= 0)
          error(dimExpr->getRange(), "tensor dimension must be positive, got " +
                                         llvm::Twine(c.getValue()));
        shape.push_back(c.getValue());
      } else {
        shape.push_back(ShapedType::kDynamic);
      }
      dimExprs.push_back(*e);
    }
    if (!element)
      element = builder.getF32Type();
    inputs.push_back(tile::getTileMemRefType(shape, element,
                                             tile::MemorySpace::Global));
    if (dimExprs.size() == param.dims.size())
      argShapes.push_back(AffineMapAttr::get(
          AffineMap::get(0, namedDims.size(), dimExprs, &context)));
  }

  // Grid and threads.
  SmallVector<AffineExpr> gridExprs;
  AffineBuilder affine(*this, namedDims, "a grid extent");
  for (auto &g : kernel.grid)
    if (auto e = affine.build(*g)) {
      if (auto c = llvm::dyn_cast<AffineConstantExpr>(*e); c && c.getValue() <= 0)
        error(g->getRange(), "grid extent must be positive, got " +
                                 llvm::Twine(c.getValue()));
      gridExprs.push_back(*e);
    }
  if (kernel.grid.size() > 3)
    error(kernel.gridRange, "grid takes 1 to 3 extents, got " +
                                llvm::Twine(kernel.grid.size()));
  if (kernel.blockIndices.size() != kernel.grid.size() &&
      kernel.grid.size() <= 3)
    error(kernel.blockIndices.front().second,
          "grid has " + llvm::Twine(kernel.grid.size()) + " extents but 'as' "
          "names " + llvm::Twine(kernel.blockIndices.size()) + " block indices");
  int64_t threads = 128;
  auto *threadsName = llvm::dyn_cast<NameExpr>(kernel.threads.get());
  if (threadsName && llvm::any_of(namedDims, [&](const NamedDim &d) {
        return d.name == threadsName->name;
      })) {
    error(kernel.threads->getRange(),
          "the thread count must be a compile-time int constant; '" +
              threadsName->name + "' is a tensor dimension known only at launch");
  } else if (auto t = constInt(*kernel.threads, "the thread count")) {
    threads = *t;
    if (threads < 32 || threads > 1024 || threads % 32 != 0)
      error(kernel.threads->getRange(),
            "threads must be a multiple of 32 between 32 and 1024, got " +
                llvm::Twine(threads));
  }
  // Header errors don't stop here: the body is still generated (into an op
  // that is erased at the end) so that its own errors are reported in the
  // same run. The grid gets one extent per named block index so the body's
  // names resolve.
  while (gridExprs.size() < std::min<size_t>(kernel.blockIndices.size(), 3))
    gridExprs.push_back(getAffineConstantExpr(1, &context));
  if (gridExprs.size() > 3)
    gridExprs.resize(3);

  SmallVector<std::pair<int64_t, int64_t>> gridDims;
  for (auto &d : namedDims)
    gridDims.emplace_back(d.param, d.dim);
  builder.setInsertionPointToEnd(module.getBody());
  auto op = tile::KernelOp::create(
      builder, loc(kernel.nameRange.Start), kernel.name,
      builder.getFunctionType(inputs, {}),
      AffineMap::get(0, namedDims.size(), gridExprs, &context), gridDims,
      threads);
  op.setConstantsAttr(builder.getDictionaryAttr(constants));
  SmallVector<Attribute> dimNames, argNames;
  for (auto &d : namedDims)
    dimNames.push_back(builder.getStringAttr(d.name));
  for (auto &p : kernel.params)
    argNames.push_back(builder.getStringAttr(p.name));
  op->setAttr("tile.arg_names", builder.getArrayAttr(argNames));
  SmallVector<Attribute> indexNames;
  for (auto &b : kernel.blockIndices)
    indexNames.push_back(builder.getStringAttr(b.first));
  op->setAttr("tile.index_names", builder.getArrayAttr(indexNames));
  op->setAttr("tile.dim_names", builder.getArrayAttr(dimNames));
  op->setAttr("tile.arg_shapes", builder.getArrayAttr(argShapes));

  builder.setInsertionPointToStart(&op.getBodyBlock());
  for (auto [i, param] : llvm::enumerate(kernel.params)) {
    Val v = Val::dynamic(Val::Kind::Tensor, op.getArgument(i));
    v.name = param.name;
    define(param.name, v, param.range);
  }
  for (auto &d : namedDims) {
    Location l = loc(kernel.params[d.param].dims[d.dim]->getLoc());
    Value dim = memref::DimOp::create(builder, l, op.getArgument(d.param),
                                      static_cast<int64_t>(d.dim));
    define(d.name, Val::dynamic(Val::Kind::Int, dim),
           kernel.params[d.param].dims[d.dim]->getRange());
  }
  for (auto [i, b] : llvm::enumerate(kernel.blockIndices))
    define(b.first,
           i < op.getGridRank()
               ? Val::dynamic(Val::Kind::Int, op.getBlockIndex(i))
               : Val::poison(),
           b.second);

  generateBlock(kernel.body);
  if (diag.errorCount() != errorsBefore)
    op->erase();
}
