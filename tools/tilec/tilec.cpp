// tilec: the command-line compiler.
//   tilec FILE [-o OUT] [-D name=value]... [--emit=ast|mlir] [--kernel NAME]
#include "tilec/Driver/Driver.h"
#include "tilec/Frontend/Parser.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#ifdef TILEC_HAVE_CPU_RUN
#include "RunCommand.h"
#endif

using namespace llvm;

namespace {

enum class Emit { AST, MLIR };

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
                          "verified tile-level IR (canonicalized)")),
    cl::cat(category));
cl::opt<std::string> kernelName("kernel",
                                cl::desc("Compile only this kernel"),
                                cl::value_desc("name"), cl::cat(category));

#ifdef TILEC_HAVE_CPU_RUN
cl::SubCommand runSub("run", "Run one kernel on the CPU reference backend");
cl::opt<std::string> runFile(cl::Positional, cl::desc("<input .tile file>"),
                             cl::Required, cl::sub(runSub));
cl::opt<std::string> runKernel("kernel", cl::desc("The kernel to run"),
                               cl::Required, cl::sub(runSub));
cl::opt<std::string> runTarget("target", cl::desc("Where to run (cpu)"),
                               cl::init("cpu"), cl::sub(runSub));
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
                                  cl::desc("Write every parameter after the run as DIR/<name>.npy"),
                                  cl::value_desc("dir"));
cl::opt<unsigned> runSeed("seed", cl::sub(runSub), cl::init(0),
                          cl::desc("Seed of the random inputs and block order"));
cl::opt<bool> runShuffle("shuffle-blocks", cl::sub(runSub), cl::init(false),
                         cl::desc("Run the grid's blocks in a random order"));
#endif

int fail(const Twine &message) {
  WithColor::error(errs(), "tilec") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "tilec " << TILEC_VERSION << " (MLIR " << MLIR_VERSION_STRING << ")\n";
  });
  cl::ParseCommandLineOptions(argc, argv,
                              "tilec: compile .tile kernels\n");
#ifdef TILEC_HAVE_CPU_RUN
  if (runSub) {
    tilec::RunCommandOptions run;
    run.file = runFile;
    run.kernel = runKernel;
    run.target = runTarget;
    run.outputDir = runOutputDir;
    run.defines = runDefines;
    run.inputs = runInputs;
    run.dims = runDims;
    run.zeros = runZeros;
    run.seed = runSeed;
    run.shuffle = runShuffle;
    return tilec::runCommand(run);
  }
#endif

  tilec::CompileOptions options;
  options.gen.kernel = kernelName;
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
    tilec::frontend::dumpAST(*program, output->os());
    output->keep();
    return 0;
  }

  mlir::MLIRContext context;
  auto module = tilec::compileToTileIR(context, sourceMgr, options, errs());
  if (!module)
    return 1;
  module->print(output->os());
  output->keep();
  return 0;
}
