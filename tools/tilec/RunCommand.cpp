// `tilec run FILE --kernel K --target cpu`: compiles one kernel and runs it on
// the CPU reference backend, with tensors from .npy files or random ones.
#include "RunCommand.h"

#include "tilec/Driver/Driver.h"
#include "tilec/Target/CPU/CPURunner.h"
#include "tilec/Target/CPU/Npy.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <map>
#include <random>

using namespace llvm;
using namespace tilec::cpu;

namespace {

int fail(const Twine &message) {
  WithColor::error(errs(), "tilec run") << message << "\n";
  return 1;
}

/// Splits "name=value" arguments into a map; reports the first bad one.
bool splitPairs(const std::vector<std::string> &items, StringRef flag,
                std::map<std::string, std::string> &out) {
  for (const std::string &item : items) {
    auto [name, value] = StringRef(item).split('=');
    if (name.empty() || value.empty() || !StringRef(item).contains('=')) {
      fail("--" + flag + " expects name=value, got '" + item + "'");
      return false;
    }
    out[name.str()] = value.str();
  }
  return true;
}

} // namespace

int tilec::runCommand(const RunCommandOptions &opts) {
  if (opts.target != "cpu")
    return fail("--target=" + opts.target +
                ": only 'cpu' is available (the GPU lowering is not done yet)");
  std::map<std::string, std::string> defines, inputs, dims;
  if (!splitPairs(opts.defines, "D", defines) ||
      !splitPairs(opts.inputs, "input", inputs) ||
      !splitPairs(opts.dims, "dim", dims))
    return 1;

  auto buffer = MemoryBuffer::getFile(opts.file, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read '" + opts.file + "': " + buffer.getError().message());
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  mlir::MLIRContext context;
  CompileOptions compile;
  compile.gen.defines = defines;
  compile.gen.kernel = opts.kernel;
  compile.atomics = opts.atomics;
  auto module = compileToTileIR(context, sourceMgr, compile, errs());
  if (!module)
    return 1;
  auto cpu = CPUModule::compile(*module);
  if (!cpu)
    return fail(toString(cpu.takeError()));
  // A kernel as written, or (after atomic legalization) the entry of that name, whose arguments are the kernel's
  // as written: both carry the signature the arguments are bound through.
  const KernelInfo *info = (*cpu)->kernel(opts.kernel);
  if (!info)
    if (const EntryInfo *entry = (*cpu)->entry(opts.kernel))
      info = &entry->signature;
  if (!info)
    return fail("no kernel named '" + opts.kernel + "'");

  auto isParam = [&](const std::string &n) {
    return llvm::is_contained(info->argNames, n);
  };
  for (auto &[name, path] : inputs)
    if (!isParam(name))
      return fail("--input " + name + "=" + path + ": kernel '" + opts.kernel +
                  "' has no parameter '" + name + "'");
  for (const std::string &name : opts.zeros)
    if (!isParam(name))
      return fail("--zero " + name + ": kernel '" + opts.kernel +
                  "' has no parameter '" + name + "'");
  for (auto &[name, value] : dims)
    if (!llvm::is_contained(info->dimNames, name))
      return fail("--dim " + name + ": kernel '" + opts.kernel +
                  "' has no dimension named '" + name + "'");

  // Tensors from files first: they fix named dimensions.
  std::vector<HostTensor> tensors(info->argNames.size());
  std::vector<bool> loaded(tensors.size(), false);
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto it = inputs.find(info->argNames[i]);
    if (it == inputs.end())
      continue;
    auto t = readNpy(it->second, info->argTypes[i]);
    if (!t)
      return fail("parameter '" + info->argNames[i] + "': " + toString(t.takeError()));
    tensors[i] = std::move(*t);
    loaded[i] = true;
  }
  // Where each named dimension is read from: its first occurrence as a bare dimension of a parameter (the front
  // end binds a name there, docs/language.md §4.2).
  std::vector<std::pair<int64_t, int64_t>> origins(info->dimNames.size(), {-1, -1});
  for (size_t a = 0; a < info->argShapes.size(); ++a)
    for (unsigned axis = 0; axis < info->argShapes[a].getNumResults(); ++axis)
      if (auto sym = dyn_cast<mlir::AffineSymbolExpr>(info->argShapes[a].getResult(axis)))
        if (sym.getPosition() < origins.size() && origins[sym.getPosition()].first < 0)
          origins[sym.getPosition()] = {int64_t(a), int64_t(axis)};
  std::vector<int64_t> symbols(info->dimNames.size(), -1);
  for (size_t s = 0; s < symbols.size(); ++s) {
    auto [arg, dim] = origins[s];
    if (arg < 0)
      return fail("dimension '" + info->dimNames[s] + "' is not a dimension of any parameter");
    const std::string &name = info->dimNames[s];
    if (loaded[arg]) {
      if (dim >= static_cast<int64_t>(tensors[arg].shape.size()))
        return fail("parameter '" + info->argNames[arg] + "' must have rank " +
                    Twine(info->argStaticShapes[arg].size()) + ", got " +
                    Twine(tensors[arg].shape.size()));
      symbols[s] = tensors[arg].shape[dim];
      auto given = dims.find(name);
      if (given != dims.end() && std::to_string(symbols[s]) != given->second)
        return fail("--dim " + name + "=" + given->second + " contradicts '" +
                    info->argNames[arg] + "', whose dimension " + Twine(dim) +
                    " (" + name + ") is " + Twine(symbols[s]));
      continue;
    }
    auto given = dims.find(name);
    int64_t v;
    if (given == dims.end())
      return fail("dimension '" + name + "' is unknown: pass --dim " + name +
                  "=N or --input for '" + info->argNames[arg] + "'");
    if (StringRef(given->second).getAsInteger(10, v) || v <= 0)
      return fail("--dim " + name + "=" + given->second +
                  ": expected a positive integer");
    symbols[s] = v;
  }
  std::mt19937_64 rng(opts.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (loaded[i])
      continue;
    std::vector<int64_t> shape;
    for (mlir::AffineExpr e : info->argShapes[i].getResults())
      shape.push_back(evaluateAffine(e, symbols));
    tensors[i] = HostTensor(info->argTypes[i], shape);
    if (llvm::is_contained(opts.zeros, info->argNames[i]))
      continue;
    for (int64_t k = 0; k < tensors[i].numel(); ++k)
      tensors[i].set(k, info->argTypes[i] == DType::I32 ? double(rng() % 16)
                        : info->argTypes[i] == DType::Bool ? double(rng() & 1)
                                                           : normal(rng));
  }

  if (!opts.outputDir.empty())
    if (std::error_code ec = sys::fs::create_directories(opts.outputDir))
      return fail("cannot create '" + opts.outputDir + "': " + ec.message());

  std::vector<HostTensor *> args;
  for (auto &t : tensors)
    args.push_back(&t);
  RunOptions run;
  run.shuffleBlocks = opts.shuffle;
  run.seed = opts.seed;
  auto start = std::chrono::steady_clock::now();
  if (auto err = (*cpu)->run(opts.kernel, args, run))
    return fail(toString(std::move(err)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  outs() << formatv("ran {0} on the CPU in {1:f3} s\n", opts.kernel, seconds);
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string shape;
    for (int64_t d : tensors[i].shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    outs() << formatv("  {0,-10} {1,-5} {2}", info->argNames[i],
                      dtypeName(tensors[i].dtype), shape);
    if (!opts.outputDir.empty()) {
      std::string path = opts.outputDir + "/" + info->argNames[i] + ".npy";
      if (auto err = writeNpy(path, tensors[i]))
        return fail(toString(std::move(err)));
      outs() << "  -> " << path;
    }
    outs() << "\n";
  }
  return 0;
}
