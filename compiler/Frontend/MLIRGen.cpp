// MLIRGen, part 1: kernels (signature, constants, grid), statements and the
// whole-tile builtins (copy, fill, gemm, reduce_*, atomic_add).
#include "MLIRGenImpl.h"

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

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void MLIRGen::generateBlock(const Block &block) {
  for (auto &stmt : block) {
    if (diag.tooManyErrors())
      return;
    generateStmt(*stmt);
  }
}

void MLIRGen::generateStmt(const Stmt &stmt) {
  if (auto *a = llvm::dyn_cast<AssignStmt>(&stmt))
    return generateAssign(*a);
  if (auto *s = llvm::dyn_cast<StoreStmt>(&stmt))
    return generateStore(*s);
  if (auto *f = llvm::dyn_cast<ForStmt>(&stmt))
    return generateFor(*f);
  if (auto *i = llvm::dyn_cast<IfStmt>(&stmt))
    return generateIf(*i);
  if (llvm::isa<PassStmt>(&stmt))
    return;
  auto &e = llvm::cast<ExprStmt>(stmt);
  if (auto *call = llvm::dyn_cast<CallExpr>(e.expr.get()))
    return generateCallStmt(*call);
  error(e.expr->getRange(), "this expression has no effect; a statement is an "
                            "assignment, a call such as copy(...), or a loop");
}

void MLIRGen::generateAssign(const AssignStmt &stmt) {
  if (auto *alloc = llvm::dyn_cast<AllocExpr>(stmt.value.get())) {
    Val tile = generateAlloc(*alloc, stmt.name);
    define(stmt.name, tile, stmt.nameRange);
    return;
  }
  Val v = expr(*stmt.value);
  if (v.isBuffer()) {
    error(stmt.value->getRange(), "'" + stmt.name + "' would alias " +
                                      describeVal(v) +
                                      "; copy tiles with copy(src, dst)");
    v = Val::poison();
  }
  define(stmt.name, v, stmt.nameRange);
}

Val MLIRGen::generateAlloc(const AllocExpr &alloc, llvm::StringRef name) {
  Type element = dtype(alloc.dtype, alloc.dtypeRange);
  SmallVector<int64_t> shape;
  bool ok = element != nullptr;
  for (auto &d : alloc.dims) {
    auto n = constInt(*d, "a tile dimension");
    if (!n) {
      ok = false;
      continue;
    }
    if (*n <= 0) {
      error(d->getRange(), "tile dimension must be positive, got " +
                               llvm::Twine(*n));
      ok = false;
      continue;
    }
    shape.push_back(*n);
  }
  if (!ok)
    return Val::poison();
  // A tile lives on chip (or, on the CPU, in one allocation): anything near
  // 2 GiB is a mistake, and products past int64 must not wrap.
  constexpr int64_t kMaxTileBytes = int64_t(1) << 31;
  int64_t bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxTileBytes) {
      error(alloc.getRange(), "tile '" + name + "' is too large (more than 2 GiB)");
      return Val::poison();
    }
  auto space = llvm::StringSwitch<tile::MemorySpace>(alloc.space)
                   .Case("shared", tile::MemorySpace::Shared)
                   .Case("fragment", tile::MemorySpace::Fragment)
                   .Default(tile::MemorySpace::Local);
  auto op = tile::AllocOp::create(
      builder, NameLoc::get(builder.getStringAttr(name), loc(alloc.getLoc())),
      tile::getTileMemRefType(shape, element, space));
  Val v = Val::dynamic(Val::Kind::Tile, op.getResult());
  v.name = name.str();
  return v;
}

void MLIRGen::generateStore(const StoreStmt &stmt) {
  const IndexExpr &target = *stmt.target;
  const Binding *b = lookup(target.base);
  if (!b) {
    error(target.baseRange, "use of undeclared name '" + target.base + "'");
    return;
  }
  if (b->val.isPoison())
    return;
  if (b->val.kind == Val::Kind::Tensor) {
    error(target.getRange(), "tensor '" + target.base + "' cannot be written "
                             "element by element; use copy() or atomic_add()");
    return;
  }
  if (b->val.kind != Val::Kind::Tile) {
    error(target.baseRange, "'" + target.base + "' is " + describeVal(b->val) +
                                ", not a tile");
    return;
  }
  if (target.hasSlices()) {
    error(target.getRange(), "a store writes one element; use copy() or "
                             "fill() for a slice");
    return;
  }
  auto type = cast<MemRefType>(b->val.value.getType());
  if (target.subscripts.size() != static_cast<size_t>(type.getRank())) {
    error(target.getRange(), "tile '" + target.base + "' has " +
                                 llvm::Twine(type.getRank()) +
                                 " dimensions but " +
                                 llvm::Twine(target.subscripts.size()) +
                                 " indices were given");
    return;
  }
  SmallVector<Value> indices;
  for (auto &s : target.subscripts) {
    Val i = expr(*s.start);
    if (i.isPoison())
      return;
    if (!i.isIntLike()) {
      error(s.start->getRange(), "tile index must be an integer, got " +
                                     describeVal(i));
      return;
    }
    indices.push_back(toIndex(i, s.start->getLoc()));
  }
  Val value = expr(*stmt.value);
  if (value.isPoison())
    return;
  if (stmt.compound) {
    Val old = load(target);
    if (old.isPoison())
      return;
    value = binaryValues(*stmt.compound, old, value, *stmt.value);
    if (value.isPoison())
      return;
  }
  Value element = toElement(value, type.getElementType(), *stmt.value);
  if (!element)
    return;
  memref::StoreOp::create(builder, loc(stmt.getLoc()), element, b->val.value,
                          indices);
}

Value MLIRGen::tileOperand(const Expr &e, llvm::StringRef role) {
  if (auto *n = llvm::dyn_cast<NameExpr>(&e)) {
    const Binding *b = lookup(n->name);
    if (!b) {
      error(e.getRange(), "use of undeclared name '" + n->name + "'");
      return {};
    }
    if (b->val.isPoison())
      return {};
    if (b->val.isBuffer())
      return b->val.value;
    error(e.getRange(), role + " must be a tile, a tensor or a slice of one; '" +
                            n->name + "' is " + describeVal(b->val));
    return {};
  }
  if (auto *idx = llvm::dyn_cast<IndexExpr>(&e)) {
    const Binding *b = lookup(idx->base);
    if (!b) {
      error(idx->baseRange, "use of undeclared name '" + idx->base + "'");
      return {};
    }
    if (b->val.isPoison())
      return {};
    if (!b->val.isBuffer()) {
      error(idx->baseRange, "'" + idx->base + "' is " + describeVal(b->val) +
                                " and cannot be sliced");
      return {};
    }
    return regionOf(*idx, b->val);
  }
  error(e.getRange(), role + " must be a tile, a tensor or a slice of one");
  return {};
}

Value MLIRGen::regionOf(const IndexExpr &index, const Val &base) {
  auto type = cast<MemRefType>(base.value.getType());
  if (index.subscripts.size() != static_cast<size_t>(type.getRank())) {
    error(index.getRange(), "'" + index.base + "' has " +
                                llvm::Twine(type.getRank()) +
                                " dimensions but " +
                                llvm::Twine(index.subscripts.size()) +
                                " subscripts were given");
    return {};
  }
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
  for (auto [d, s] : llvm::enumerate(index.subscripts)) {
    switch (s.kind) {
    case Subscript::Kind::Full: {
      if (type.isDynamicDim(d)) {
        error(s.range, "':' takes all of dimension " + llvm::Twine(d) +
                           " of '" + index.base +
                           "', which is known only at launch; write a slice "
                           "'start :+ length'");
        return {};
      }
      offsets.push_back(arith::ConstantIndexOp::create(builder, loc(s.range.Start), 0));
      sizes.push_back(type.getDimSize(d));
      break;
    }
    case Subscript::Kind::Index:
    case Subscript::Kind::Slice: {
      Val start = expr(*s.start);
      if (start.isPoison())
        return {};
      if (!start.isIntLike()) {
        error(s.start->getRange(), "index must be an integer, got " +
                                       describeVal(start));
        return {};
      }
      int64_t size = 1;
      if (s.kind == Subscript::Kind::Slice) {
        auto len = constInt(*s.length, "a slice length");
        if (!len)
          return {};
        if (*len <= 0) {
          error(s.length->getRange(), "slice length must be positive, got " +
                                          llvm::Twine(*len));
          return {};
        }
        size = *len;
      }
      offsets.push_back(toIndex(start, s.start->getLoc()));
      sizes.push_back(size);
      break;
    }
    }
  }
  return tile::RegionOp::create(builder, loc(index.getLoc()), base.value,
                                offsets, sizes);
}

void MLIRGen::generateCallStmt(const CallExpr &call) {
  Location l = loc(call.getLoc());
  llvm::StringRef callee = call.callee;
  if (callee == "copy") {
    if (!checkArgs(call, 2, 2, {"pad"}, "source, target"))
      return;
    Value src = tileOperand(*call.args[0], "the source of copy()");
    Value dst = tileOperand(*call.args[1], "the target of copy()");
    if (!src || !dst)
      return;
    // pad=v: what the source's elements past the end of its tensor (or tile) read as, instead of zero.
    if (const KeywordArg *kw = keyword(call, "pad")) {
      Val v = expr(*kw->value);
      if (v.isPoison())
        return;
      if (!v.isConst() || !(v.isFloatLike() || v.isIntLike())) {
        error(kw->value->getRange(), "pad must be a compile-time number, got " + describeVal(v));
        return;
      }
      auto region = src.getDefiningOp<tile::RegionOp>();
      if (!region) {
        error(kw->value->getRange(), "pad= applies to a source that is a slice of a tensor or tile (elements past "
                                     "its end read as the pad value); this source is a whole tile");
        return;
      }
      double value = v.kind == Val::Kind::ConstInt ? double(v.intValue) : v.floatValue;
      region.setPadAttr(builder.getF64FloatAttr(value));
    }
    tile::CopyOp::create(builder, l, src, dst);
    return;
  }
  if (callee == "fill") {
    if (!checkArgs(call, 2, 2, {}, "target, value"))
      return;
    Value dst = tileOperand(*call.args[0], "the target of fill()");
    Val v = expr(*call.args[1]);
    if (!dst || v.isPoison())
      return;
    if (!v.isScalar()) {
      error(call.args[1]->getRange(), "fill() value must be a scalar, got " +
                                          describeVal(v));
      return;
    }
    Value element = toElement(v, tile::getElementTypeOf(dst.getType()),
                              *call.args[1]);
    if (element)
      tile::FillOp::create(builder, l, dst, element);
    return;
  }
  if (callee == "gemm") {
    if (!checkArgs(call, 3, 3, {"transpose_a", "transpose_b", "clear", "policy"},
                   "a, b, c"))
      return;
    Value a = tileOperand(*call.args[0], "operand A of gemm()");
    Value b = tileOperand(*call.args[1], "operand B of gemm()");
    Value c = tileOperand(*call.args[2], "accumulator C of gemm()");
    bool flags[3] = {false, false, false};
    const char *names[3] = {"transpose_a", "transpose_b", "clear"};
    for (int i = 0; i < 3; ++i)
      if (const KeywordArg *kw = keyword(call, names[i])) {
        auto v = constBool(*kw->value, names[i]);
        if (!v)
          return;
        flags[i] = *v;
      }
    tile::GemmPolicy policy = tile::GemmPolicy::Square;
    if (const KeywordArg *kw = keyword(call, "policy")) {
      auto *n = llvm::dyn_cast<NameExpr>(kw->value.get());
      auto parsed = n ? tile::symbolizeGemmPolicy(n->name) : std::nullopt;
      if (!parsed) {
        error(kw->value->getRange(),
              "policy must be square, full_row or full_col");
        return;
      }
      policy = *parsed;
    }
    if (!a || !b || !c)
      return;
    auto op = tile::GemmOp::create(builder, l, a, b, c);
    op.setTransposeA(flags[0]);
    op.setTransposeB(flags[1]);
    op.setClear(flags[2]);
    op.setPolicy(policy);
    return;
  }
  if (callee == "reduce_sum" || callee == "reduce_max" || callee == "reduce_min") {
    if (!checkArgs(call, 2, 2, {"dim", "clear"}, "source, target"))
      return;
    Value src = tileOperand(*call.args[0], "the source of " + callee.str() + "()");
    Value dst = tileOperand(*call.args[1], "the target of " + callee.str() + "()");
    if (!src || !dst)
      return;
    int64_t rank = tile::getShapeOf(src.getType()).size();
    int64_t dim = rank - 1;
    bool clear = true;
    if (const KeywordArg *kw = keyword(call, "dim")) {
      auto v = constInt(*kw->value, "the reduction dim");
      if (!v)
        return;
      if (*v < -rank || *v >= rank) {
        error(kw->value->getRange(), "reduction dim " + llvm::Twine(*v) +
                                         " is out of range for a " +
                                         llvm::Twine(rank) + "-d source");
        return;
      }
      dim = *v < 0 ? *v + rank : *v;
    }
    if (const KeywordArg *kw = keyword(call, "clear")) {
      auto v = constBool(*kw->value, "clear");
      if (!v)
        return;
      clear = *v;
    }
    auto kind = callee == "reduce_sum"   ? tile::ReduceKind::Sum
                : callee == "reduce_max" ? tile::ReduceKind::Max
                                         : tile::ReduceKind::Min;
    auto op = tile::ReduceOp::create(builder, l, kind, src, dst, dim);
    op.setClear(clear);
    return;
  }
  if (callee == "atomic_add") {
    if (!checkArgs(call, 2, 2, {"order"}, "destination, value"))
      return;
    tile::MemoryOrder order = tile::MemoryOrder::Relaxed;
    if (const KeywordArg *kw = keyword(call, "order")) {
      auto *n = llvm::dyn_cast<NameExpr>(kw->value.get());
      auto parsed = n ? tile::symbolizeMemoryOrder(n->name) : std::nullopt;
      if (!parsed) {
        error(kw->value->getRange(),
              "order must be relaxed, release, acq_rel or seq_cst");
        return;
      }
      order = *parsed;
    }
    // dst[i, j] with plain indices and a scalar value: the element form.
    auto *idx = llvm::dyn_cast<IndexExpr>(call.args[0].get());
    if (idx && !idx->hasSlices()) {
      const Binding *b = lookup(idx->base);
      Val v = expr(*call.args[1]);
      if (!b) {
        error(idx->baseRange, "use of undeclared name '" + idx->base + "'");
        return;
      }
      if (b->val.isPoison() || v.isPoison())
        return;
      if (v.isBoolLike()) {
        error(call.args[1]->getRange(),
              "atomic_add() adds a number, got " + describeVal(v));
        return;
      }
      if (v.isScalar()) {
        if (!b->val.isBuffer()) {
          error(idx->baseRange, "'" + idx->base + "' is " +
                                    describeVal(b->val) + ", not a tensor");
          return;
        }
        auto type = cast<MemRefType>(b->val.value.getType());
        if (idx->subscripts.size() != static_cast<size_t>(type.getRank())) {
          error(idx->getRange(), "'" + idx->base + "' has " +
                                     llvm::Twine(type.getRank()) +
                                     " dimensions but " +
                                     llvm::Twine(idx->subscripts.size()) +
                                     " indices were given");
          return;
        }
        SmallVector<Value> indices;
        for (auto &s : idx->subscripts) {
          Val i = expr(*s.start);
          if (i.isPoison())
            return;
          if (!i.isIntLike()) {
            error(s.start->getRange(), "index must be an integer, got " +
                                           describeVal(i));
            return;
          }
          indices.push_back(toIndex(i, s.start->getLoc()));
        }
        Type element = type.getElementType();
        Value value = isa<FloatType>(element) ? toF32(v, call.args[1]->getLoc())
                                              : toElement(v, element, *call.args[1]);
        if (!value)
          return;
        auto op = tile::AtomicAddOp::create(builder, l, value, b->val.value,
                                            indices);
        op.setOrder(order);
        return;
      }
    }
    Value dst = tileOperand(*call.args[0], "the destination of atomic_add()");
    Value src = tileOperand(*call.args[1], "the value of atomic_add()");
    if (!dst || !src)
      return;
    auto op = tile::AtomicAddOp::create(builder, l, src, dst, ValueRange{});
    op.setOrder(order);
    return;
  }
  if (isValueBuiltin(callee)) {
    error(call.getRange(), "the result of " + callee + "() is unused");
    return;
  }
  error(call.calleeRange, "unknown function '" + callee + "'");
}

void MLIRGen::generateFor(const ForStmt &stmt) {
  const CallExpr &iter = *stmt.iter;
  Location l = loc(stmt.getLoc());
  OpBuilder::InsertionGuard guard(builder);
  if (iter.callee == "parallel") {
    if (!checkArgs(iter, 1, 8, {}, "extents..."))
      return;
    if (iter.args.size() != stmt.vars.size()) {
      error(iter.getRange(), "parallel() has " + llvm::Twine(iter.args.size()) +
                                 " extents but the loop names " +
                                 llvm::Twine(stmt.vars.size()) + " variables");
      return;
    }
    SmallVector<int64_t> extents;
    for (auto &a : iter.args) {
      auto e = constInt(*a, "a parallel() extent");
      if (!e)
        return;
      if (*e <= 0) {
        error(a->getRange(), "parallel() extent must be positive, got " +
                                 llvm::Twine(*e));
        return;
      }
      extents.push_back(*e);
    }
    auto op = tile::ParallelOp::create(builder, l, extents);
    builder.setInsertionPointToStart(&op.getBodyBlock());
    pushScope();
    for (auto [i, v] : llvm::enumerate(stmt.vars))
      define(v.first, Val::dynamic(Val::Kind::Int, op.getInductionVars()[i]),
             v.second);
    ++loopDepth;
    generateBlock(stmt.body);
    --loopDepth;
    popScope();
    return;
  }
  if (iter.callee == "pipelined" || iter.callee == "range") {
    bool pipelined = iter.callee == "pipelined";
    if (pipelined ? !checkArgs(iter, 2, 2, {"stages"}, "lower, upper")
                  : !checkArgs(iter, 1, 3, {}, "[lower,] upper[, step]"))
      return;
    if (stmt.vars.size() != 1) {
      error(stmt.vars[1].second, iter.callee + "() loops have one variable");
      return;
    }
    SmallVector<Value> bounds;
    for (auto &a : iter.args) {
      Val v = expr(*a);
      if (v.isPoison())
        return;
      if (!v.isIntLike()) {
        error(a->getRange(), "loop bound must be an integer, got " +
                                 describeVal(v));
        return;
      }
      bounds.push_back(toIndex(v, a->getLoc()));
    }
    Value iv;
    if (pipelined) {
      int64_t stages = 1;
      if (const KeywordArg *kw = keyword(iter, "stages")) {
        auto s = constInt(*kw->value, "the number of stages");
        if (!s)
          return;
        if (*s < 1) {
          error(kw->value->getRange(), "stages must be at least 1, got " +
                                           llvm::Twine(*s));
          return;
        }
        stages = *s;
      }
      auto op = tile::PipelinedOp::create(builder, l, bounds[0], bounds[1],
                                          stages);
      builder.setInsertionPointToStart(&op.getBodyBlock());
      iv = op.getInductionVar();
    } else {
      Value lower = bounds.size() == 1
                        ? arith::ConstantIndexOp::create(builder, l, 0)
                        : bounds[0];
      Value upper = bounds.size() == 1 ? bounds[0] : bounds[1];
      Value step = bounds.size() == 3
                       ? bounds[2]
                       : arith::ConstantIndexOp::create(builder, l, 1);
      if (bounds.size() == 3) {
        Val s = expr(*iter.args[2]);
        if (s.kind == Val::Kind::ConstInt && s.intValue <= 0) {
          error(iter.args[2]->getRange(), "range() step must be positive, got " +
                                              llvm::Twine(s.intValue));
          return;
        }
      }
      auto op = scf::ForOp::create(builder, l, lower, upper, step);
      builder.setInsertionPoint(op.getBody()->getTerminator());
      iv = op.getInductionVar();
    }
    pushScope();
    define(stmt.vars[0].first, Val::dynamic(Val::Kind::Int, iv),
           stmt.vars[0].second);
    ++loopDepth;
    generateBlock(stmt.body);
    --loopDepth;
    popScope();
    return;
  }
  error(iter.calleeRange, "expected parallel(...), pipelined(...) or "
                          "range(...), got '" + iter.callee + "'");
}

void MLIRGen::generateIf(const IfStmt &stmt) {
  Val cond = expr(*stmt.cond);
  if (cond.isPoison())
    return;
  if (!cond.isBoolLike()) {
    error(stmt.cond->getRange(), "condition must be a bool, got " +
                                     describeVal(cond));
    return;
  }
  if (cond.kind == Val::Kind::ConstBool) {
    // Known at compile time (e.g. `if causal:`): only the taken branch
    // exists, but the other is checked too, so that flipping a -D does not
    // reveal errors that were there all along.
    pushScope();
    generateBlock(cond.boolValue ? stmt.thenBody : stmt.elseBody);
    popScope();
    checkOnly([&] { generateBlock(cond.boolValue ? stmt.elseBody : stmt.thenBody); });
    return;
  }
  OpBuilder::InsertionGuard guard(builder);
  auto op = scf::IfOp::create(builder, loc(stmt.getLoc()), cond.value,
                              /*withElseRegion=*/!stmt.elseBody.empty());
  builder.setInsertionPoint(op.thenBlock()->getTerminator());
  pushScope();
  generateBlock(stmt.thenBody);
  popScope();
  if (!stmt.elseBody.empty()) {
    builder.setInsertionPoint(op.elseBlock()->getTerminator());
    pushScope();
    generateBlock(stmt.elseBody);
    popScope();
  }
}
