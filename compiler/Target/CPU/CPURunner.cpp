#include "tilec/Target/CPU/CPURunner.h"
#include "tilec/Dialect/Tile/IR/TileOps.h"
#include "tilec/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

using namespace mlir;

namespace tilec::cpu {

static float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
static uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
static uint16_t floatToBF16(float f) {
  uint32_t bits = floatToBits(f);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);   // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

/// A shape expression with the dims' names, for messages. (Printing the AffineExpr and substituting "s0", "s1", ...
/// by text matched inside names such as "pos0" and inside "s10", and could loop forever.)
static std::string renderShapeExpr(AffineExpr e, llvm::ArrayRef<std::string> names) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::to_string(c.getValue());
  if (auto sym = dyn_cast<AffineSymbolExpr>(e))
    return sym.getPosition() < names.size() ? names[sym.getPosition()] : "s" + std::to_string(sym.getPosition());
  if (auto dim = dyn_cast<AffineDimExpr>(e))
    return "d" + std::to_string(dim.getPosition());
  auto bin = cast<AffineBinaryOpExpr>(e);
  const char *op = e.getKind() == AffineExprKind::Add        ? " + "
                   : e.getKind() == AffineExprKind::Mul      ? " * "
                   : e.getKind() == AffineExprKind::FloorDiv ? " floordiv "
                   : e.getKind() == AffineExprKind::CeilDiv  ? " ceildiv "
                                                             : " mod ";
  return renderShapeExpr(bin.getLHS(), names) + op + renderShapeExpr(bin.getRHS(), names);
}

std::optional<DType> dtypeOf(Type t) {
  if (t.isBF16()) return DType::BF16;
  if (t.isF16()) return DType::F16;
  if (t.isF32()) return DType::F32;
  if (t.isSignlessInteger(32)) return DType::I32;
  if (t.isInteger(1)) return DType::Bool;
  return std::nullopt;
}

// LLVM's x86 backend keeps bf16 and f16 values that cross basic blocks (phi
// nodes of masked loads) in f32 and calls these soft-float helpers to convert;
// libgcc 12 lacks the bf16 ones, so the JIT gets its own. bf16/f16 travel in
// the low 16 bits of an XMM register, which is how _Float16 is passed.
extern "C" {
static _Float16 tilecTruncSFBF2(float f) {
  uint16_t bits = floatToBF16(f);
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return h;
}
static float tilecExtendBFSF2(_Float16 h) {
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}
static _Float16 tilecTruncSFHF2(float f) { return static_cast<_Float16>(f); }
static float tilecExtendHFSF2(_Float16 h) { return static_cast<float>(h); }
}

CPUModule::~CPUModule() = default;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

llvm::Expected<std::unique_ptr<CPUModule>> CPUModule::compile(ModuleOp module) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  MLIRContext *context = module.getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  std::unique_ptr<CPUModule> result(new CPUModule());
  // Entries (launch plans) run on the host: read them, then drop them from
  // what is lowered.
  for (auto entry : llvm::make_early_inc_range(module.getOps<tile::EntryOp>())) {
    auto info = extractEntry(entry);
    if (!info)
      return info.takeError();
    result->entryInfos.push_back(std::move(*info));
    entry.erase();
  }
  for (auto kernel : module.getOps<tile::KernelOp>()) {
    KernelInfo info;
    info.name = kernel.getSymName().str();
    auto names = kernel->getAttrOfType<ArrayAttr>("tile.arg_names");
    for (auto [i, t] : llvm::enumerate(kernel.getFunctionType().getInputs())) {
      auto memref = dyn_cast<MemRefType>(t);
      if (!memref)
        return error("kernel '" + info.name + "': the CPU backend takes tensor "
                     "arguments only");
      auto dtype = dtypeOf(memref.getElementType());
      if (!dtype)
        return error("kernel '" + info.name + "': unsupported element type");
      info.argTypes.push_back(*dtype);
      std::vector<int64_t> shape;
      for (int64_t d : memref.getShape())
        shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
      info.argStaticShapes.push_back(shape);
      info.argNames.push_back(
          names && i < names.size()
              ? cast<StringAttr>(names[i]).str()
              : ("#" + llvm::Twine(i)).str());
    }
    info.grid = kernel.getGrid();
    for (unsigned i = 0; i < info.grid.getNumSymbols(); ++i)
      info.gridSymbols.push_back(kernel.getGridSymbol(i));
    if (auto shapes = kernel->getAttrOfType<ArrayAttr>("tile.arg_shapes"))
      for (Attribute a : shapes)
        info.argShapes.push_back(cast<AffineMapAttr>(a).getValue());
    if (auto dims = kernel->getAttrOfType<ArrayAttr>("tile.dim_names"))
      for (Attribute a : dims)
        info.dimNames.push_back(cast<StringAttr>(a).str());
    result->infos.push_back(std::move(info));
  }

  PassManager pm(context);
  pm.addPass(tilec::createTileToLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  // bf16/f16 arithmetic runs in f32; then the remaining bf16 <-> f32
  // conversions become integer bit manipulation (x86 has no bf16 ops).
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &d) {
      // file:line:col as the front end prints it, where the op still carries its source line.
      if (auto at = d.getLocation()->findInstanceOf<FileLineColLoc>())
        os << at.getFilename().getValue() << ":" << at.getLine() << ":" << at.getColumn();
      else
        os << d.getLocation();
      os << ": error: " << d.str() << "\n";
      return success();
    });
    if (failed(pm.run(module)))
      return error("internal compiler error: lowering to LLVM for the CPU failed (please report it with this "
                   "kernel):\n" + diagnostics);
  }

  // ExecutionEngineOptions::transformer is a function_ref: the std::function it refers to must outlive create()
  // (assigning the temporary directly left it dangling: a stack-use-after-scope in every CPU run).
  std::function<llvm::Error(llvm::Module *)> transformer = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  result->engine = std::move(*engine);
  result->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char *name, auto *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("__truncsfbf2", &tilecTruncSFBF2);
    add("__extendbfsf2", &tilecExtendBFSF2);
    add("__truncsfhf2", &tilecTruncSFHF2);
    add("__extendhfsf2", &tilecExtendHFSF2);
    return symbols;
  });
  return result;
}

const KernelInfo *CPUModule::kernel(llvm::StringRef name) const {
  for (auto &k : infos)
    if (k.name == name)
      return &k;
  return nullptr;
}

int64_t evaluateAffine(AffineExpr e, llvm::ArrayRef<int64_t> symbols);
static int64_t evalAffine(AffineExpr e, llvm::ArrayRef<int64_t> symbols) {
  return evaluateAffine(e, symbols);
}

int64_t evaluateAffine(AffineExpr e, llvm::ArrayRef<int64_t> symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue();
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbols[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  int64_t l = evalAffine(bin.getLHS(), symbols);
  int64_t r = evalAffine(bin.getRHS(), symbols);
  switch (e.getKind()) {
  case AffineExprKind::Add: return l + r;
  case AffineExprKind::Mul: return l * r;
  case AffineExprKind::FloorDiv: return l >= 0 ? l / r : -((-l + r - 1) / r);
  case AffineExprKind::CeilDiv: return l >= 0 ? (l + r - 1) / r : -((-l) / r);
  case AffineExprKind::Mod: return ((l % r) + r) % r;
  default: return 0;
  }
}

/// A ranked memref descriptor as the C interface expects it:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct Descriptor {
  std::vector<int64_t> words;
  Descriptor(HostTensor &t) {
    size_t rank = t.shape.size();
    words.resize(3 + 2 * rank);
    auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
    words[0] = ptr;
    words[1] = ptr;
    words[2] = 0;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = t.shape[i];
      words[3 + rank + i] = stride;
      stride *= t.shape[i];
    }
  }
};

llvm::Error CPUModule::run(llvm::StringRef name, std::vector<HostTensor *> args,
                           const RunOptions &options) {
  if (const EntryInfo *e = entry(name))
    return runEntry(*e, std::move(args), options);
  const KernelInfo *info = kernel(name);
  if (!info)
    return error("no kernel named '" + name + "'");
  if (args.size() != info->argTypes.size())
    return error("kernel '" + name + "' takes " +
                 llvm::Twine(info->argTypes.size()) + " tensors, got " +
                 llvm::Twine(args.size()));
  // Dtype, rank, static dims.
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &param = info->argNames[i];
    if (!args[i])
      return error("argument '" + param + "' is missing");
    if (args[i]->dtype != info->argTypes[i])
      return error("argument '" + param + "' must be " +
                   dtypeName(info->argTypes[i]) + ", got " +
                   dtypeName(args[i]->dtype));
    if (args[i]->shape.size() != info->argStaticShapes[i].size())
      return error("argument '" + param + "' must have rank " +
                   llvm::Twine(info->argStaticShapes[i].size()) + ", got " +
                   llvm::Twine(args[i]->shape.size()));
    for (size_t d = 0; d < args[i]->shape.size(); ++d) {
      int64_t expected = info->argStaticShapes[i][d];
      if (args[i]->shape[d] < 0 || (expected >= 0 && args[i]->shape[d] != expected))
        return error("argument '" + param + "' dimension " + llvm::Twine(d) +
                     " must be " + llvm::Twine(expected) + ", got " +
                     llvm::Twine(args[i]->shape[d]));
    }
  }
  // Named dims: read from where each is bound, then every argument's dims
  // must agree with its declared shape expression.
  std::vector<int64_t> symbols;
  for (auto [arg, dim] : info->gridSymbols)
    symbols.push_back(args[arg]->shape[dim]);
  for (size_t i = 0; i < info->argShapes.size() && i < args.size(); ++i) {
    AffineMap shape = info->argShapes[i];
    for (unsigned d = 0; d < shape.getNumResults(); ++d) {
      int64_t expected = evalAffine(shape.getResult(d), symbols);
      if (args[i]->shape[d] != expected) {
        std::string what = renderShapeExpr(shape.getResult(d), info->dimNames);
        return error("argument '" + info->argNames[i] + "' dimension " +
                     llvm::Twine(d) + " is " + llvm::Twine(args[i]->shape[d]) +
                     " but the signature says " + what + " = " +
                     llvm::Twine(expected));
      }
    }
  }
  std::vector<int64_t> extents;
  for (AffineExpr e : info->grid.getResults())
    extents.push_back(evalAffine(e, symbols));
  // The same limits as a GPU launch (runtime::Entry::resolve): a negative extent is an error, not an empty grid,
  // and so is one no GPU could launch (which would also make the block list below absurdly large).
  int64_t blocks = 1;
  for (auto [k, e] : llvm::enumerate(extents)) {
    int64_t limit = k == 0 ? (int64_t{1} << 31) - 1 : 65535;
    if (e < 0 || e > limit)
      return error("grid extent " + llvm::Twine(k) + " of kernel '" + info->name + "' is " + llvm::Twine(e) +
                   " for these arguments; it must be in 0.." + llvm::Twine(limit));
    blocks *= e;
    if (blocks > (int64_t{1} << 32))
      return error("kernel '" + info->name + "' would run " + llvm::Twine(blocks) +
                   "+ blocks on the CPU backend; more than it runs (2^32)");
  }
  std::vector<int64_t> order(blocks);
  std::iota(order.begin(), order.end(), 0);
  if (options.shuffleBlocks) {
    std::mt19937_64 rng(options.seed);
    std::shuffle(order.begin(), order.end(), rng);
  }

  std::vector<Descriptor> descriptors;
  descriptors.reserve(args.size());
  for (HostTensor *t : args)
    descriptors.emplace_back(*t);
  std::vector<void *> descriptorPtrs;
  for (auto &d : descriptors)
    descriptorPtrs.push_back(d.words.data());
  std::vector<int64_t> blockIndex(extents.size());
  std::vector<void *> packed;
  for (auto &p : descriptorPtrs)
    packed.push_back(&p);
  for (auto &b : blockIndex)
    packed.push_back(&b);
  std::string fn = "_mlir_ciface_" + name.str() + "_block";
  for (int64_t linear : order) {
    int64_t rest = linear;
    for (size_t d = 0; d < extents.size(); ++d) {
      blockIndex[d] = rest % extents[d];
      rest /= extents[d];
    }
    if (llvm::Error err = engine->invokePacked(fn, packed))
      return err;
  }
  return llvm::Error::success();
}

} // namespace tilec::cpu
