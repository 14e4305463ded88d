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
