// Every kernel in kernels/ on the GPU against the CPU backend on the same inputs, in process: the cases of
// cpu-backend-cases.txt (shapes with tails, each atomics strategy, flash-attention variants), compiled with the
// compiler library, their arguments made through the entry's signature with the same seed as the CPU run
// (runtime::makeHostArguments), run through runtime::runOnDevice and compared with the CPU backend's results.
//
// The GPU machine has no CPU backend (MLIR's ExecutionEngine stays out of the bundle), so the CPU results are made
// beforehand by `scripts/gpu-cpu-cases.sh refs` (scripts/gpu-bundle.sh does it) into a directory found through
// $TILEC_CPU_REFERENCES, else <binary>/../refs (the bundle). That directory holds its own copy of the case list.
// Cases compiled with --deterministic run 5 times and must agree bitwise.
#include "CompilerTestSupport.h"
#include "GpuTestSupport.h"

#include "tilec/runtime/HostTensor.h"
#include "tilec/runtime/Npy.h"

#include <sstream>

using namespace tilec;
using namespace tilec::runtime;
using namespace tilec::testing;

namespace {

constexpr std::uint64_t kCaseSeed = 11; // the seed scripts/gpu-cpu-cases.sh gives `tilec run`

struct Case {
  std::string name, file, kernel;
  GpuCompileOptions compile;
  HostArgumentRequest request;
  double tolerance = 0; // 0: defaultComparisonTolerance of each result's dtype
};

// One line of the case list; `tilec run`'s options, of which the list uses -D, --dim, --zero, --atomics=,
// --deterministic and --tolerance. Anything else fails the test rather than being skipped.
Case parseCase(const std::string &line) {
  Case c;
  std::vector<std::string> fields;
  std::stringstream split(line);
  for (std::string field; std::getline(split, field, '|');)
    fields.push_back(field);
  INFO("case line: " << line);
  REQUIRE(fields.size() == 4);
  c.name = fields[0];
  c.file = fields[1];
  c.kernel = c.compile.kernel = fields[2];
  c.request.seed = kCaseSeed;
  std::stringstream words(fields[3]);
  auto pair = [&](const std::string &text) {
    auto eq = text.find('=');
    REQUIRE(eq != std::string::npos);
    return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
  };
  for (std::string word; words >> word;) {
    std::string value;
    if (word == "-D" || word == "--dim" || word == "--zero" || word == "--tolerance")
      REQUIRE(words >> value);
    if (word == "-D") {
      auto [name, v] = pair(value);
      c.compile.defines[name] = v;
    } else if (word == "--dim") {
      auto [name, v] = pair(value);
      c.request.dims[name] = std::stoll(v);
    } else if (word == "--zero") {
      c.request.zeros.push_back(value);
    } else if (word == "--tolerance") {
      c.tolerance = std::stod(value);
    } else if (word.rfind("--atomics=", 0) == 0) {
      c.compile.atomics = word.substr(10);
    } else if (word == "--deterministic") {
      c.compile.deterministic = true;
      c.compile.atomics = "split";
    } else {
      FAIL("case " << c.name << ": unknown option '" << word << "'");
    }
  }
  return c;
}

std::vector<Case> readCases(const std::string &path) {
  std::ifstream in(path);
  INFO("case list " << path);
  REQUIRE(in);
  std::vector<Case> cases;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      cases.push_back(parseCase(line));
  REQUIRE(!cases.empty());
  return cases;
}

std::string referencesDir() {
  if (const char *env = std::getenv("TILEC_CPU_REFERENCES"))
    return env;
  return kernelsDir() + "/../refs";
}

} // namespace

TEST_CASE("the GPU-vs-CPU case list parses and every case compiles to CUDA", "[cpu-backend]") {
  std::vector<Case> cases = readCases(TILEC_CPU_CASES_FILE);
  for (const Case &c : cases) {
    GpuProgram program = compileForGpu(readKernel(c.file), c.file, c.compile);
    INFO("case " << c.name << ": " << program.diagnostics);
    CHECK(program.ok);
  }
}

TEST_CASE("every kernel in kernels/ has a GPU-vs-CPU case", "[cpu-backend]") {
  std::vector<Case> cases = readCases(TILEC_CPU_CASES_FILE);
  int kernels = 0;
  for (const std::string &file : tileFiles())
    for (const std::string &kernel : kernelNames(readKernel(file))) {
      ++kernels;
      bool covered = std::any_of(cases.begin(), cases.end(),
                                 [&](const Case &c) { return c.file == file && c.kernel == kernel; });
      INFO("kernel " << kernel << " of " << file << " has no line in " << TILEC_CPU_CASES_FILE);
      CHECK(covered);
    }
  CHECK(kernels >= 12);
}

TEST_CASE("GPU matches the CPU backend on the same inputs: every kernel in kernels/, each atomics strategy",
          "[gpu][cpu-backend]") {
  TILEC_REQUIRE_GPU_OR_SKIP(driver);
  std::string refs = referencesDir();
  if (!std::ifstream(refs + "/cases.txt")) {
    WARN("SKIPPED: no CPU references in " << refs
                                          << " (make them with scripts/gpu-cpu-cases.sh refs, or set "
                                             "TILEC_CPU_REFERENCES)");
    return;
  }
  Runtime runtime(uncachedOptions());
  int compared = 0;
  for (const Case &c : readCases(refs + "/cases.txt")) {
    CompiledKernel k = compileKernel(runtime, c.file, c.compile, runtime.targetArch());
    const Entry &entry = k.module->entry(c.kernel);
    const std::vector<ParamSpec> &params = entry.signature().params();
    std::vector<HostTensor> inputs = makeHostArguments(entry.signature(), c.request);
    std::vector<HostTensor> first;
    int runs = c.compile.deterministic ? 5 : 1;
    for (int run = 0; run < runs; ++run) {
      std::vector<HostTensor> args = inputs;
      runOnDevice(entry, args);
      for (size_t i = 0; i < args.size(); ++i) {
        HostTensor reference = readNpy(refs + "/" + c.name + "/" + params[i].name + ".npy", params[i].dtype);
        double error = relativeError(args[i], reference), rowError = worstRowError(args[i], reference);
        double bound = c.tolerance > 0 ? c.tolerance : defaultComparisonTolerance(args[i].dtype);
        INFO("case " << c.name << " run " << run << ", parameter " << params[i].name << ": relative error "
                     << error << " (bound " << bound << "), worst row " << rowError << " (bound "
                     << bound * kRowToleranceFactor << ")");
        CHECK(error <= bound); // NaN fails
        CHECK(rowError <= bound * kRowToleranceFactor);
        if (run == 0 && error > 0)
          WARN("case " << c.name << ", " << params[i].name << ": relative error against the CPU backend " << error);
      }
      if (run == 0)
        first = args;
      for (size_t i = 0; run > 0 && i < args.size(); ++i) {
        INFO("case " << c.name << " (--deterministic) run " << run << ", parameter " << params[i].name
                     << " is bitwise the same as run 0");
        CHECK(args[i].bytes == first[i].bytes);
      }
    }
    ++compared;
  }
  WARN(compared << " cases compared with the CPU backend");
}
