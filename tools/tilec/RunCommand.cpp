// `tilec run FILE --kernel K --target cpu|cuda [--check]`: compiles one kernel, makes its arguments (from .npy files
// or random) through the entry's signature (runtime::makeHostArguments, shared with tests and bindings), runs it on
// the CPU reference backend and/or the GPU, and compares the two with --check.
//
// Compiled with exceptions (tilec is not): runtime errors are caught here and become messages.
#include "RunCommand.h"

#include "tilec/Driver/Driver.h"
#include "tilec/Jit/GpuCompile.h"
#include "tilec/Jit/TargetArch.h"
#include "tilec/Target/Plan/EntryToPlan.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/HostTensor.h"
#include "tilec/runtime/Npy.h"
#include "tilec/runtime/Runtime.h"
#ifdef TILEC_HAVE_CPU_RUN
#include "tilec/Target/CPU/CPURunner.h"
#endif

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>
#include <map>

using namespace llvm;
namespace rt = tilec::runtime;

namespace {

int fail(const Twine &message) {
  WithColor::error(errs(), "tilec run") << message << "\n";
  return 1;
}

/// Splits "name=value" arguments into a map; reports the first bad one.
bool splitPairs(const std::vector<std::string> &items, StringRef flag, std::map<std::string, std::string> &out) {
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

/// One compiled form of the kernel: its module and the entry (or kernel) to run.
struct Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<rt::Signature> signature;
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d);
  return text.empty() ? "scalar" : text;
}

} // namespace

int tilec::runCommand(const RunCommandOptions &opts) {
  bool onCpu = opts.target == "cpu" || opts.check;
  bool onGpu = opts.target == "cuda" || opts.check;
  if (opts.target != "cpu" && opts.target != "cuda")
    return fail("--target expects cpu or cuda, got '" + opts.target + "'");
#ifndef TILEC_HAVE_CPU_RUN
  if (onCpu)
    return fail(opts.check ? "--check needs the CPU backend, which this tilec is built without "
                             "(TILEC_CLI_WITH_CPU_RUN=OFF): compare against outputs of a full build instead"
                           : "--target cpu: this tilec is built without the CPU backend (TILEC_CLI_WITH_CPU_RUN=OFF)");
#endif
  if (opts.shuffle && !onCpu)
    return fail("--shuffle-blocks applies to the CPU backend (--target cpu or --check)");
  // One target for both backends, so that --check compares the same kernel (SM and WGMMA pick its defaults), and
  // --target cpu runs what --target cuda would on this machine. Found when first asked (it may load the driver).
  if (!opts.arch.empty() && !frontend::parseGpuTarget(opts.arch))
    return fail("--arch expects a real GPU architecture such as sm_90a, got '" + opts.arch + "'");
  TargetArch target(opts.arch);
  if (opts.tolerance && !opts.check && opts.referenceDir.empty())
    return fail("--tolerance applies to --check and --reference");
  if (opts.check && !opts.referenceDir.empty())
    return fail("--check and --reference are two ways to compare: give one");
  if (opts.tolerance && (*opts.tolerance < 0 || std::isnan(*opts.tolerance)))
    return fail("--tolerance must be a non-negative number");
  // Both targets legalize atomics the same way, so that --check compares like with like; only the CPU alone runs
  // the atomics as written by default.
  std::string atomicsError;
  std::optional<AtomicsStrategy> strategy = resolveAtomicsStrategy(
      opts.atomics, opts.deterministic, onGpu ? std::optional(AtomicsStrategy::FP32) : std::nullopt, atomicsError);
  if (!atomicsError.empty())
    return fail(atomicsError);
  if (opts.maxSplit < 1)
    return fail("--max-split must be at least 1, got " + Twine(opts.maxSplit));
  std::map<std::string, std::string> defines, inputs, dimTexts;
  if (!splitPairs(opts.defines, "D", defines) || !splitPairs(opts.inputs, "input", inputs) ||
      !splitPairs(opts.dims, "dim", dimTexts))
    return 1;
  rt::HostArgumentRequest request;
  request.inputs = inputs;
  request.zeros = opts.zeros;
  request.seed = opts.seed;
  for (auto &[name, text] : dimTexts) {
    int64_t value;
    if (StringRef(text).getAsInteger(10, value) || value <= 0)
      return fail("--dim " + name + "=" + text + ": expected a positive integer");
    request.dims[name] = value;
  }

  auto buffer = MemoryBuffer::getFile(opts.file, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read '" + opts.file + "': " + buffer.getError().message());
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  mlir::MLIRContext context;
  // Errors after the front end (the CUDA emitter's) at their source line, clang-style.
  mlir::SourceMgrDiagnosticHandler laterDiagnostics(sourceMgr, &context, errs());
  auto options = [&](bool forGpu) {
    CompileOptions compile;
    compile.gen.defines = defines;
    compile.gen.kernel = opts.kernel;
    compile.gen.resolveTarget = [&target](std::string &error) { return target.gpuTarget(error); };
    compile.atomics = strategy;
    compile.deterministic = opts.deterministic;
    compile.maxSplit = opts.maxSplit;
    compile.remarks = opts.remarks && (forGpu || !onGpu); // once
    compile.lowerForGpu = forGpu;
    return compile;
  };
  // The arguments are bound through the signature of the entry (or, with the atomics as written, the kernel).
  auto signatureOf = [&](mlir::ModuleOp module) -> Expected<rt::Signature> {
    for (auto entry : module.getOps<tile::EntryOp>())
      if (entry.getSymName() == opts.kernel)
        return lowerEntrySignature(entry);
    for (auto kernel : module.getOps<tile::KernelOp>())
      if (kernel.getSymName() == opts.kernel)
        return lowerSignature(kernel, kernel.getFunctionType());
    return createStringError(inconvertibleErrorCode(), "no kernel named '" + opts.kernel + "'");
  };

  mlir::OwningOpRef<mlir::ModuleOp> gpuModule, cpuModule;
  std::optional<rt::Signature> signature;
  std::vector<rt::EntrySpec> entries;
  std::string cuda;
  if (onGpu) {
    std::optional<GpuCode> code = compileToGpuCode(context, sourceMgr, options(/*forGpu=*/true), errs());
    if (!code)
      return 1;
    gpuModule = std::move(code->module);
    auto sig = signatureOf(*gpuModule);
    if (!sig)
      return fail(toString(sig.takeError()));
    signature = std::move(*sig);
    entries = std::move(code->entries);
    cuda = std::move(code->cuda);
  }
  if (onCpu) {
    cpuModule = compileToTileIR(context, sourceMgr, options(/*forGpu=*/false), errs());
    if (!cpuModule)
      return 1;
    if (!signature) {
      auto sig = signatureOf(*cpuModule);
      if (!sig)
        return fail(toString(sig.takeError()));
      signature = std::move(*sig);
    }
  }

  // Without a driver nothing can launch: say so before the (possibly long) CPU run of --check.
  if (onGpu) {
    try {
      rt::Driver::load();
    } catch (const rt::Error &error) {
      return fail(error.what());
    }
  }
  std::vector<rt::HostTensor> tensors;
  try {
    tensors = rt::makeHostArguments(*signature, request);
  } catch (const rt::Error &error) {
    return fail(error.what());
  }
  const std::vector<rt::ParamSpec> &params = signature->params();
  std::vector<rt::HostTensor> cpuTensors = onGpu && onCpu ? tensors : std::vector<rt::HostTensor>();
  std::vector<rt::HostTensor> &cpuArgs = onGpu ? cpuTensors : tensors;

#ifdef TILEC_HAVE_CPU_RUN
  if (onCpu) {
    auto cpu = cpu::CPUModule::compile(*cpuModule);
    if (!cpu)
      return fail(toString(cpu.takeError()));
    std::vector<rt::HostTensor *> args;
    for (auto &t : cpuArgs)
      args.push_back(&t);
    cpu::RunOptions run;
    run.shuffleBlocks = opts.shuffle;
    run.seed = opts.seed;
    auto start = std::chrono::steady_clock::now();
    if (auto err = (*cpu)->run(opts.kernel, args, run))
      return fail(toString(std::move(err)));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outs() << formatv("ran {0} on the CPU in {1:f3} s\n", opts.kernel, seconds);
  }
#endif
  if (onGpu) {
    try {
      rt::Runtime runtime;
      rt::CompileOptions nvrtc;
      std::string archError;
      nvrtc.arch = target.arch(archError);
      if (!archError.empty())
        return fail(archError);
      auto start = std::chrono::steady_clock::now();
      rt::CompileResult compiled = runtime.compile(cuda, nvrtc);
      double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      auto module = runtime.loadModule({compiled.cubin}, entries);
      double seconds = rt::runOnDevice(module->entry(opts.kernel), tensors);
      outs() << formatv("ran {0} on the GPU ({1}) in {2:f3} ms (CUBIN {3} in {4:f3} s)\n", opts.kernel, nvrtc.arch,
                        seconds * 1e3,
                        compiled.source == rt::CacheSource::Compiled ? "compiled" : "from the cache",
                        compileSeconds);
    } catch (const rt::Error &error) {
      return fail(error.what());
    }
  }

  if (!opts.outputDir.empty())
    if (std::error_code ec = sys::fs::create_directories(opts.outputDir))
      return fail("cannot create '" + opts.outputDir + "': " + ec.message());
  // What each result is compared with: the CPU backend's run on the same inputs (--check), or stored outputs of
  // such a run (--reference DIR: DIR/<name>.npy, e.g. written by `tilec run --target cpu` on another machine from
  // the same seed, which makes the same inputs).
  std::vector<rt::HostTensor> references;
  std::string against = opts.check ? "cuda vs cpu" : "vs reference";
  if (opts.check)
    references = cpuTensors;
  for (size_t i = 0; i < tensors.size() && !opts.referenceDir.empty(); ++i) {
    try {
      references.push_back(rt::readNpy(opts.referenceDir + "/" + params[i].name + ".npy", params[i].dtype));
    } catch (const rt::Error &error) {
      return fail("--reference: parameter '" + params[i].name + "': " + error.what());
    }
    if (references.back().shape != tensors[i].shape)
      return fail("--reference: parameter '" + params[i].name + "': the reference has shape " +
                  shapeText(references.back().shape) + ", the run " + shapeText(tensors[i].shape));
  }
  bool mismatch = false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    outs() << formatv("  {0,-10} {1,-5} {2}", params[i].name, rt::dtypeName(tensors[i].dtype),
                      shapeText(tensors[i].shape));
    if (!references.empty()) {
      double error = rt::relativeError(tensors[i], references[i]);
      double rowError = rt::worstRowError(tensors[i], references[i]);
      // An explicit --tolerance, 0 included (exact), else the dtype's default; a row may be off by
      // kRowToleranceFactor times that.
      double tolerance = opts.tolerance ? *opts.tolerance : rt::defaultComparisonTolerance(tensors[i].dtype);
      double rowTolerance = tolerance * rt::kRowToleranceFactor;
      bool ok = error <= tolerance && rowError <= rowTolerance; // NaN fails
      mismatch |= !ok;
      outs() << formatv("  {0}: {1:e2} {2} {3:e1}, worst row {4:e2} {5} {6:e1}{7}", against, error,
                        error <= tolerance ? "<=" : "> ", tolerance, rowError, rowError <= rowTolerance ? "<=" : "> ",
                        rowTolerance, ok ? "" : "  MISMATCH");
    }
    if (!opts.outputDir.empty()) {
      std::string path = opts.outputDir + "/" + params[i].name + ".npy";
      try {
        rt::writeNpy(path, tensors[i]);
        if (opts.check)
          rt::writeNpy(opts.outputDir + "/" + params[i].name + ".cpu.npy", cpuTensors[i]);
      } catch (const rt::Error &error) {
        return fail(error.what());
      }
      outs() << "  -> " << path;
    }
    outs() << "\n";
  }
  if (mismatch)
    return fail(opts.check ? "the GPU and the CPU backend disagree (relative norm or a row's above the tolerance)"
                           : "the results differ from the reference (relative norm or a row's above the tolerance)");
  return 0;
}
