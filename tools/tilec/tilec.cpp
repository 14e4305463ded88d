// tilec: the command-line compiler.
//   tilec FILE [-o OUT] [-D name=value]... [--emit=ast|mlir|legalized] [--kernel NAME]
//         [--atomics=fp32|split|native] [--deterministic] [--max-split=N] [--remarks]
//   --emit=plan: the launch plan of each entry in the runtime's text form (docs/runtime.md)
#include "tilec/Driver/Driver.h"
#include "tilec/Jit/GpuCompile.h"
#include "tilec/Jit/TargetArch.h"
#include "NvrtcBridge.h"
#include "tilec/Frontend/Parser.h"
#include "tilec/runtime/PlanText.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <memory>

#include "RunCommand.h"

using namespace llvm;

namespace {

enum class Emit { AST, MLIR, Legalized, Plan, Lowered, Cuda, Ptx, Cubin, Module };

cl::OptionCategory category("tilec options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .tile file>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a compile-time constant"),
                              cl::value_desc("name=value"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::MLIR),
    cl::values(clEnumValN(Emit::AST, "ast", "the parsed syntax tree"),
               clEnumValN(Emit::MLIR, "mlir",
                          "verified tile-level IR (canonicalized)"),
               clEnumValN(Emit::Legalized, "legalized",
                          "after atomic legalization: kernels and the launch "
                          "plan (tile.entry) of each"),
               clEnumValN(Emit::Plan, "plan",
                          "the launch plan of each entry, lowered to the "
                          "runtime's plan text (after legalization)"),
               clEnumValN(Emit::Lowered, "lowered",
                          "after the GPU lowering passes: every layout, "
                          "shared-memory offset, swizzle and barrier"),
               clEnumValN(Emit::Cuda, "cuda",
                          "the CUDA C++ source of every kernel (NVRTC input)"),
               clEnumValN(Emit::Ptx, "ptx",
                          "PTX of every kernel, from NVRTC (for --arch's virtual architecture)"),
               clEnumValN(Emit::Cubin, "cubin",
                          "the CUBIN NVRTC builds for --arch (binary)"),
               clEnumValN(Emit::Module, "module",
                          "a .tcm module file: the CUBIN for --arch and every "
                          "entry's signature and plan (what `tilec compile` writes)")),
    cl::cat(category));
cl::opt<std::string> arch(
    "arch", cl::desc("GPU architecture to compile for: the source's SM and WGMMA, and NVRTC's target for "
                     "--emit=ptx|cubin|module (default: TILEC_CUDA_ARCH, else the current device's, else sm_90a)"),
    cl::value_desc("sm_XX"), cl::init(""), cl::cat(category));
cl::opt<std::string> kernelName("kernel",
                                cl::desc("Compile only this kernel"),
                                cl::value_desc("name"), cl::cat(category));
// Atomic legalization (docs/atomics.md); applies from --emit=legalized on.
cl::opt<std::string> atomics(
    "atomics",
    cl::desc("How atomic_add into bf16/f16 tensors is realised: fp32 "
             "(f32 workspace, default), split (deterministic split + sum "
             "where legal, fp32 elsewhere) or native"),
    cl::value_desc("fp32|split|native"), cl::init("fp32"), cl::cat(category));
cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("Split wherever legal and fail at any float atomic that cannot "
             "be made deterministic (implies --atomics=split)"),
    cl::cat(category));
cl::opt<int64_t> maxSplit("max-split",
                          cl::desc("Most partial slices split may allocate"),
                          cl::value_desc("N"), cl::init(8), cl::cat(category));
cl::opt<bool> remarks("remarks",
                      cl::desc("Explain how each atomic_add is realised"),
                      cl::cat(category));

cl::SubCommand runSub("run", "Run one kernel on the CPU reference backend or the GPU, or both (--check)");
cl::opt<std::string> runFile(cl::Positional, cl::desc("<input .tile file>"),
                             cl::Required, cl::sub(runSub));
cl::opt<std::string> runKernel("kernel", cl::desc("The kernel to run"),
                               cl::Required, cl::sub(runSub));
cl::opt<std::string> runTarget("target", cl::desc("Where to run: cpu (the reference backend) or cuda"),
                               cl::init("cpu"), cl::sub(runSub));
cl::opt<bool> runCheck("check", cl::sub(runSub),
                       cl::desc("Run on the GPU and on the CPU backend with the same inputs and compare every "
                                "tensor (relative norm; exit 1 on a mismatch)"));
cl::opt<std::string> runReference("reference", cl::sub(runSub), cl::value_desc("dir"),
                                  cl::desc("Compare every tensor after the run with DIR/<name>.npy (e.g. a CPU "
                                           "backend run's --output-dir with the same seed; exit 1 on a mismatch)"));
cl::opt<double> runTolerance("tolerance", cl::sub(runSub), cl::init(0.0),
                             cl::desc("--check's and --reference's tolerance for floats (default by dtype: bf16 2e-2, f16 5e-3, "
                                      "f32/f64 1e-4; integers exact; 0: exact; a row may differ by 5 times that)"));
cl::opt<std::string> runArch("arch", cl::sub(runSub), cl::value_desc("sm_XX"),
                             cl::desc("GPU architecture to compile for, on both targets (the source's SM and WGMMA; "
                                      "default: TILEC_CUDA_ARCH, else the device's, else sm_90a)"));
cl::list<std::string> runDefines("D", cl::Prefix, cl::sub(runSub),
                                 cl::desc("Override a compile-time constant"),
                                 cl::value_desc("name=value"));
cl::list<std::string> runInputs("input", cl::sub(runSub),
                                cl::desc("Read a parameter from a .npy file"),
                                cl::value_desc("param=file.npy"));
cl::list<std::string> runDims("dim", cl::sub(runSub),
                              cl::desc("Size of a named dimension of random inputs"),
                              cl::value_desc("name=N"));
cl::list<std::string> runZeros("zero", cl::sub(runSub),
                               cl::desc("Start this parameter at zeros instead of random"),
                               cl::value_desc("param"));
cl::opt<std::string> runOutputDir("output-dir", cl::sub(runSub),
                                  cl::desc("Write every parameter after the run as DIR/<name>.npy (with --check, "
                                           "the CPU's as DIR/<name>.cpu.npy too)"),
                                  cl::value_desc("dir"));
cl::opt<unsigned> runSeed("seed", cl::sub(runSub), cl::init(0),
                          cl::desc("Seed of the random inputs and block order"));
cl::opt<std::string> runAtomics(
    "atomics", cl::sub(runSub), cl::init(""), cl::value_desc("fp32|split|native"),
    cl::desc("Legalize atomics with this strategy and run the launch plan "
             "(default: fp32 where the GPU runs; on the CPU alone, the atomics as written)"));
cl::opt<bool> runDeterministic("deterministic", cl::sub(runSub),
                               cl::desc("As for compiling: split wherever legal, fail at any float atomic that "
                                        "cannot be made deterministic"));
cl::opt<int64_t> runMaxSplit("max-split", cl::sub(runSub), cl::init(8), cl::value_desc("N"),
                             cl::desc("Most partial slices split may allocate"));
cl::opt<bool> runRemarks("remarks", cl::sub(runSub),
                         cl::desc("Explain how each atomic_add is realised and what the GPU lowering converts"));
cl::opt<bool> runShuffle("shuffle-blocks", cl::sub(runSub), cl::init(false),
                         cl::desc("Run the grid's blocks in a random order (CPU backend)"));

int fail(const Twine &message) {
  WithColor::error(errs(), "tilec") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // `tilec compile FILE [options]` is `tilec FILE --emit=module [options]`: the ahead-of-time path for hosts.
  std::vector<char *> args(argv, argv + argc);
  std::string emitModule = "--emit=module";
  if (argc > 1 && StringRef(argv[1]) == "compile") {
    // `compile` writes a module: an --emit of another stage would be silently overridden, so it is an error.
    for (int i = 2; i < argc; ++i)
      if (StringRef(argv[i]).starts_with("--emit") || StringRef(argv[i]).starts_with("-emit")) {
        errs() << "tilec: error: `tilec compile` writes a module (.tcm); " << argv[i]
               << " does not apply (use `tilec FILE --emit=...` for another stage)\n";
        return 1;
      }
    args.erase(args.begin() + 1);
    args.push_back(emitModule.data());
  }
  argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  argv = args.data();
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "tilec " << TILEC_VERSION << " (MLIR " << MLIR_VERSION_STRING << ")\n";
  });
  cl::ParseCommandLineOptions(argc, argv,
                              "tilec: compile .tile kernels\n");
  if (runSub) {
    // LLVM's parser lets a subcommand accept the top-level options too; `run` has its own, and the others would
    // be silently ignored.
    cl::Option *topLevelOptions[] = {&outputFile, std::addressof(defines),       &emit,     &arch,   &kernelName,
                                     &atomics,    &deterministic, &maxSplit, &remarks};
    for (cl::Option *topLevel : topLevelOptions)
      if (topLevel->getNumOccurrences())
        return fail((topLevel->ArgStr.size() > 1 ? "'--" : "'-") + topLevel->ArgStr + "' is not an option of 'tilec run' (see tilec run --help)");
    tilec::RunCommandOptions run;
    run.file = runFile;
    run.kernel = runKernel;
    run.target = runTarget;
    run.check = runCheck;
    if (runTolerance.getNumOccurrences())
      run.tolerance = runTolerance;
    run.referenceDir = runReference;
    run.arch = runArch;
    run.outputDir = runOutputDir;
    run.defines = runDefines;
    run.inputs = runInputs;
    run.dims = runDims;
    run.zeros = runZeros;
    run.seed = runSeed;
    run.shuffle = runShuffle;
    run.atomics = runAtomics;
    run.deterministic = runDeterministic;
    run.maxSplit = runMaxSplit;
    run.remarks = runRemarks;
    return tilec::runCommand(run);
  }

  tilec::CompileOptions options;
  options.gen.kernel = kernelName;
  std::string atomicsError;
  std::optional<tilec::AtomicsStrategy> strategy = tilec::resolveAtomicsStrategy(
      atomics.getNumOccurrences() ? std::string(atomics.getValue()) : std::string(), deterministic,
      tilec::AtomicsStrategy::FP32, atomicsError);
  if (!strategy)
    return fail(atomicsError);
  if (maxSplit < 1)
    return fail("--max-split must be at least 1, got " + Twine(maxSplit));
  // The target is what the source's SM and WGMMA are (target-dependent defaults) and what NVRTC builds for. Without
  // --arch it is found (TILEC_CUDA_ARCH, else the GPU's, which loads the driver) only when something asks.
  if (arch.getNumOccurrences() && emit == Emit::AST)
    return fail("--arch does not apply to --emit=ast: the tree is what was written, before any constant is evaluated");
  if (arch.getNumOccurrences() && !tilec::frontend::parseGpuTarget(arch))
    return fail("--arch expects a real GPU architecture such as sm_90a, got '" + arch + "'");
  tilec::TargetArch target(arch);
  options.gen.resolveTarget = [&target](std::string &error) { return target.gpuTarget(error); };
  if (emit == Emit::Legalized || emit == Emit::Plan || emit == Emit::Lowered || emit == Emit::Cuda ||
      emit == Emit::Ptx || emit == Emit::Cubin || emit == Emit::Module) {
    options.lowerForGpu = emit == Emit::Lowered || emit == Emit::Cuda || emit == Emit::Plan ||
                          emit == Emit::Ptx || emit == Emit::Cubin || emit == Emit::Module;
    options.atomics = strategy;
    options.deterministic = deterministic;
    options.maxSplit = maxSplit;
    options.remarks = remarks;
  }
  for (const std::string &d : defines) {
    auto [name, value] = StringRef(d).split('=');
    if (name.empty() || value.empty() || !StringRef(d).contains('='))
      return fail("-D expects name=value, got '" + d + "'");
    options.gen.defines[name.str()] = value.str();
  }

  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail("cannot read '" + inputFile + "': " + ec.message());
  if (sys::fs::is_directory(inputFile))
    return fail("cannot read '" + inputFile + "': it is a directory");
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());

  std::string error;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail("cannot write '" + outputFile + "': " + error);

  if (emit == Emit::AST) {
    auto program = tilec::parse(sourceMgr, errs());
    if (!program)
      return 1;
    // The tree is what was written: -D does not change it, --kernel picks.
    if (!kernelName.empty()) {
      auto &kernels = program->kernels;
      kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                   [](const auto &k) { return k->name != kernelName; }),
                    kernels.end());
      if (kernels.empty())
        return fail("no kernel named '" + kernelName + "'");
    }
    tilec::frontend::dumpAST(*program, output->os());
    output->keep();
    return 0;
  }

  mlir::MLIRContext context;
  if (emit == Emit::Plan || emit == Emit::Cuda || emit == Emit::Ptx || emit == Emit::Cubin || emit == Emit::Module) {
    std::optional<tilec::GpuCode> code = tilec::compileToGpuCode(context, sourceMgr, options, errs());
    if (!code)
      return 1;
    if (emit == Emit::Plan) {
      output->os() << tilec::runtime::printPlan(code->entries);
      output->keep();
      return 0;
    }
    if (emit == Emit::Cuda) {
      output->os() << code->cuda;
      output->keep();
      return 0;
    }
    std::string archError;
    const std::string &nvrtcArch = target.arch(archError);
    if (!archError.empty())
      return fail(archError);
    tilec::cli::NvrtcOutput built = emit == Emit::Module
                                        ? tilec::cli::buildModuleFile(code->cuda, nvrtcArch, std::move(code->entries))
                                        : tilec::cli::compileWithNvrtc(code->cuda, nvrtcArch, emit == Emit::Ptx);
    if (!built.ok)
      return fail(built.error);
    if (emit == Emit::Ptx || emit == Emit::Module)
      output->os() << built.ptx;
    else
      output->os().write(built.cubin.data(), built.cubin.size());
    output->keep();
    return 0;
  }
  auto module = tilec::compileToTileIR(context, sourceMgr, options, errs());
  if (!module)
    return 1;
  module->print(output->os());
  output->keep();
  return 0;
}
