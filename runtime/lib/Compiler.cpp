#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Arch.h"

#include "DynamicLibrary.h"
#include "EmbeddedHeaders.h"
#include "tilec/runtime/Error.h"

#include <algorithm>
#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <glob.h>
#include <regex>
#include <sstream>
#include <sys/stat.h>

namespace tilec::runtime {

namespace {

using NvrtcResult = int;
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl *;

bool isDirectory(const std::string &path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool isFile(const std::string &path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::vector<std::string> toolkitRoots() {
  std::vector<std::string> roots;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string root = environment(variable); !root.empty())
      roots.push_back(root);
  roots.push_back("/usr/local/cuda");
  return roots;
}

std::string findCudaIncludeDir(const std::string &configured) {
  if (!configured.empty())
    return configured;
  if (std::string overridden = environment("TILEC_CUDA_INCLUDE_DIR"); !overridden.empty())
    return overridden;
  for (const std::string &root : toolkitRoots())
    if (isDirectory(root + "/include"))
      return root + "/include";
  return "";
}

std::vector<std::string> nvrtcCandidates(const std::string &configured) {
  if (!configured.empty())
    return {configured};
  if (std::string overridden = environment("TILEC_NVRTC_LIBRARY"); !overridden.empty())
    return {overridden};
  std::vector<std::string> candidates;
  for (const std::string &root : toolkitRoots())
    for (const char *libDir : {"/lib64/", "/lib/", "/targets/x86_64-linux/lib/"})
      if (std::string path = root + libDir + "libnvrtc.so"; isFile(path))
        candidates.push_back(path);
  for (const char *soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
    candidates.emplace_back(soname);
  return candidates;
}

bool hasSlash(const std::string &name) { return name.find('/') != std::string::npos; }

// Adds the directories named in an ld.so.conf-style file, following its `include` lines (glob patterns).
void addLdConfigDirectories(const std::string &file, std::vector<std::string> &directories, int depth = 0) {
  std::ifstream in(file);
  if (!in || depth > 4)
    return;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string first;
    if (!(words >> first))
      continue;
    if (first != "include") {
      directories.push_back(first);
      continue;
    }
    for (std::string pattern; words >> pattern;) {
      if (!hasSlash(pattern) || pattern[0] != '/')
        pattern = file.substr(0, file.rfind('/') + 1) + pattern;
      glob_t matches{};
      if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
        for (std::size_t i = 0; i < matches.gl_pathc; ++i)
          addLdConfigDirectories(matches.gl_pathv[i], directories, depth + 1);
      globfree(&matches);
    }
  }
}

// The directories the dynamic loader searches for a bare soname, in its order: $LD_LIBRARY_PATH, the ld.so.cache
// (built from /etc/ld.so.conf's directories), then the default system directories.
std::vector<std::string> loaderSearchDirectories() {
  std::vector<std::string> directories;
  std::istringstream libraryPath(environment("LD_LIBRARY_PATH"));
  for (std::string directory; std::getline(libraryPath, directory, ':');)
    if (!directory.empty())
      directories.push_back(directory);
  addLdConfigDirectories("/etc/ld.so.conf", directories);
  for (const char *directory : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
                                "/usr/lib"})
    directories.emplace_back(directory);
  return directories;
}

// The file a candidate (a path, or a soname) names, found without loading it; "" when none is found.
std::string locateLibrary(const std::string &candidate, const std::vector<std::string> &searchDirectories) {
  if (hasSlash(candidate))
    return isFile(candidate) ? candidate : "";
  for (const std::string &directory : searchDirectories)
    if (std::string path = directory + "/" + candidate; isFile(path))
      return path;
  return "";
}

// What the cache key records about an NVRTC library file: its canonical path (symlinks resolved, so the versioned
// file name of a toolkit), size and modification time. Any NVRTC upgrade or replacement changes one of them.
std::string fileIdentity(const std::string &path) {
  struct stat info {};
  char resolved[PATH_MAX];
  if (stat(path.c_str(), &info) != 0 || !realpath(path.c_str(), resolved))
    return "";
  return fmt::format("{} size={} mtime={}.{:09}", resolved, static_cast<long long>(info.st_size),
                     static_cast<long long>(info.st_mtim.tv_sec), static_cast<long>(info.st_mtim.tv_nsec));
}

} // namespace

struct Compiler::Nvrtc {
  std::string path;
  int major = 0;
  int minor = 0;
  const char *(*getErrorString)(NvrtcResult);
  NvrtcResult (*version)(int *, int *);
  NvrtcResult (*createProgram)(NvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *);
  NvrtcResult (*destroyProgram)(NvrtcProgram *);
  NvrtcResult (*compileProgram)(NvrtcProgram, int, const char *const *);
  NvrtcResult (*getProgramLogSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getProgramLog)(NvrtcProgram, char *);
  NvrtcResult (*getCubinSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getCubin)(NvrtcProgram, char *);
  NvrtcResult (*getPtxSize)(NvrtcProgram, size_t *);
  NvrtcResult (*getPtx)(NvrtcProgram, char *);
  // The real architectures this NVRTC builds for (CUDA >= 11.2); empty when the library does not say.
  std::vector<int> supportedArchs;
};

Compiler::Compiler(CompilerConfig config)
    : config_(std::move(config)), cudaIncludeDir_(findCudaIncludeDir(config_.cudaIncludeDir)) {}

Compiler::~Compiler() = default;

// The NVRTC file to load, found the way the loader would find it; empty when no candidate is found that way
// (then loading tries each candidate with dlopen, which may still find one, e.g. through a RUNPATH).
const std::string &Compiler::nvrtcFileLocked() const {
  if (!nvrtcFile_) {
    std::vector<std::string> searchDirectories = loaderSearchDirectories();
    nvrtcFile_.emplace();
    for (const std::string &candidate : nvrtcCandidates(config_.nvrtcLibrary))
      if (std::string path = locateLibrary(candidate, searchDirectories); !path.empty()) {
        nvrtcFile_ = path;
        break;
      }
  }
  return *nvrtcFile_;
}

std::optional<std::string> Compiler::toolchain() const {
  std::lock_guard<std::mutex> lock(nvrtcMutex_);
  // Once per Compiler: a memory-cache hit must not cost system calls. The located file is the one nvrtcLocked()
  // loads, so the identity describes the library that compiles.
  if (!toolchain_) {
    std::string identity = fileIdentity(nvrtcFileLocked());
    if (identity.empty()) {
      try { // found only by dlopen (through a RUNPATH, say): the loaded file and its version
        const Nvrtc &api = nvrtcLocked();
        identity = fmt::format("{} version={}.{}", fileIdentity(api.path), api.major, api.minor);
      } catch (const CompileError &) {
        toolchain_.emplace(std::nullopt); // no NVRTC at all
        return *toolchain_;
      }
    }
    toolchain_.emplace("nvrtc=" + identity + " include=" + cudaIncludeDir_);
  }
  return *toolchain_;
}

const Compiler::Nvrtc &Compiler::nvrtc() const {
  std::lock_guard<std::mutex> lock(nvrtcMutex_);
  return nvrtcLocked();
}

const Compiler::Nvrtc &Compiler::nvrtcLocked() const {
  if (nvrtc_)
    return *nvrtc_;
  {
    std::string tried;
    detail::DynamicLibrary library;
    std::string loadedPath;
    std::vector<std::string> candidates = nvrtcCandidates(config_.nvrtcLibrary);
    if (const std::string &located = nvrtcFileLocked(); !located.empty())
      candidates = {located};
    for (const std::string &candidate : candidates) {
      std::string error;
      library = detail::DynamicLibrary::open(candidate, error);
      if (library.loaded()) {
        loadedPath = candidate;
        break;
      }
      tried += fmt::format("\n  {}: {}", candidate, error);
    }
    if (!library.loaded())
      throw CompileError("NVRTC could not be loaded; set TILEC_NVRTC_LIBRARY or CUDA_HOME. Tried:" + tried, "", {});
    auto nvrtc = std::make_unique<Nvrtc>();
    nvrtc->path = loadedPath;
    auto resolve = [&](const char *name, auto &slot) {
      void *function = library.symbol(name);
      if (!function)
        throw CompileError(fmt::format("NVRTC library {} has no symbol {}", loadedPath, name), "", {});
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(function);
    };
    resolve("nvrtcGetErrorString", nvrtc->getErrorString);
    resolve("nvrtcVersion", nvrtc->version);
    resolve("nvrtcCreateProgram", nvrtc->createProgram);
    resolve("nvrtcDestroyProgram", nvrtc->destroyProgram);
    resolve("nvrtcCompileProgram", nvrtc->compileProgram);
    resolve("nvrtcGetProgramLogSize", nvrtc->getProgramLogSize);
    resolve("nvrtcGetProgramLog", nvrtc->getProgramLog);
    resolve("nvrtcGetCUBINSize", nvrtc->getCubinSize);
    resolve("nvrtcGetCUBIN", nvrtc->getCubin);
    resolve("nvrtcGetPTXSize", nvrtc->getPtxSize);
    resolve("nvrtcGetPTX", nvrtc->getPtx);
    nvrtc->version(&nvrtc->major, &nvrtc->minor);
    // Optional entry points: an arch outside this list fails in NVRTC with a bare NVRTC_ERROR_INVALID_OPTION, so the
    // compile functions check it first and name the supported ones.
    auto getNumSupportedArchs = reinterpret_cast<NvrtcResult (*)(int *)>(library.symbol("nvrtcGetNumSupportedArchs"));
    auto getSupportedArchs = reinterpret_cast<NvrtcResult (*)(int *)>(library.symbol("nvrtcGetSupportedArchs"));
    int archCount = 0;
    if (getNumSupportedArchs && getSupportedArchs && getNumSupportedArchs(&archCount) == 0 && archCount > 0) {
      nvrtc->supportedArchs.resize(static_cast<std::size_t>(archCount));
      if (getSupportedArchs(nvrtc->supportedArchs.data()) != 0)
        nvrtc->supportedArchs.clear();
    }
    // The file the loader chose for a soname: where the symbols came from.
    Dl_info where{};
    if (dladdr(reinterpret_cast<void *>(nvrtc->version), &where) && where.dli_fname)
      nvrtc->path = where.dli_fname;
    library.release(); // programs may outlive any one Compiler; NVRTC stays loaded
    nvrtc_ = std::move(nvrtc);
  }
  return *nvrtc_;
}

std::string Compiler::nvrtcVersion() const {
  const Nvrtc &api = nvrtc();
  return fmt::format("{}.{}", api.major, api.minor);
}

const std::vector<DeviceHeader> &Compiler::deviceHeaders() {
  static const std::vector<DeviceHeader> headers = [] {
    std::vector<DeviceHeader> list;
    for (std::size_t i = 0; i < detail::kEmbeddedDeviceHeaderCount; ++i) {
      const detail::EmbeddedFile &file = detail::kEmbeddedDeviceHeaders[i];
      list.push_back({file.name, std::string_view(file.contents, file.size)});
    }
    return list;
  }();
  return headers;
}

std::vector<std::string> Compiler::nvrtcOptions(const CompileOptions &options) const {
  std::vector<std::string> all = {"--gpu-architecture=" + options.arch, "-std=c++17", "--ptxas-options=-v"};
  if (!cudaIncludeDir_.empty())
    all.push_back("--include-path=" + cudaIncludeDir_);
  all.insert(all.end(), options.flags.begin(), options.flags.end());
  return all;
}

// Runs NVRTC on `source` with `optionStrings` and hands the compiled program to `fetch`; throws CompileError with the
// log and the options on any failure.
template <typename Fetch>
static void runNvrtc(const Compiler::Nvrtc &api, const std::string &source, const CompileOptions &options,
                     const std::vector<std::string> &optionStrings, std::string &log, Fetch fetch) {
  // NVRTC wants NUL-terminated header texts; the embedded ones are sized byte arrays.
  const std::vector<DeviceHeader> &headers = Compiler::deviceHeaders();
  std::vector<std::string> headerTexts;
  std::vector<std::string> headerNames;
  for (const DeviceHeader &header : headers) {
    headerTexts.emplace_back(header.contents);
    headerNames.emplace_back(header.includeName);
  }
  std::vector<const char *> headerTextPointers;
  std::vector<const char *> headerNamePointers;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    headerTextPointers.push_back(headerTexts[i].c_str());
    headerNamePointers.push_back(headerNames[i].c_str());
  }

  NvrtcProgram program = nullptr;
  NvrtcResult result = api.createProgram(&program, source.c_str(), options.programName.c_str(),
                                         static_cast<int>(headers.size()), headerTextPointers.data(),
                                         headerNamePointers.data());
  if (result != 0)
    throw CompileError(fmt::format("nvrtcCreateProgram failed for {}: {}", options.programName,
                                   api.getErrorString(result)),
                       "", optionStrings);
  struct ProgramGuard {
    const Compiler::Nvrtc &api;
    NvrtcProgram &program;
    ~ProgramGuard() { api.destroyProgram(&program); }
  } guard{api, program};

  std::vector<const char *> optionPointers;
  for (const std::string &option : optionStrings)
    optionPointers.push_back(option.c_str());
  NvrtcResult compileResult =
      api.compileProgram(program, static_cast<int>(optionPointers.size()), optionPointers.data());

  size_t logSize = 0;
  if (api.getProgramLogSize(program, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    api.getProgramLog(program, log.data());
    log.resize(logSize - 1); // drop the terminating NUL
  }
  if (compileResult != 0)
    throw CompileError(fmt::format("NVRTC {}.{} failed to compile {} for {}: {}", api.major, api.minor,
                                   options.programName, options.arch, api.getErrorString(compileResult)),
                       log, optionStrings);
  fetch(program);
}

// Both outputs are made for a real GPU (the PTX for its virtual architecture).
// Returns its number (90 for sm_90a).
static int requireRealArch(const Compiler &compiler, const CompileOptions &options) {
  std::optional<ArchName> name = parseArch(options.arch, "sm_");
  if (!name)
    throw CompileError(fmt::format("cannot compile {}: arch must name a real GPU such as sm_90a, got '{}'",
                                   options.programName, options.arch),
                       "", compiler.nvrtcOptions(options));
  return name->number;
}

// An arch this NVRTC does not build for is named with the ones it does, before NVRTC answers
// NVRTC_ERROR_INVALID_OPTION without saying which option.
static void requireSupportedArch(const Compiler::Nvrtc &api, const CompileOptions &options, int arch,
                                 const std::vector<std::string> &optionStrings) {
  if (api.supportedArchs.empty() ||
      std::find(api.supportedArchs.begin(), api.supportedArchs.end(), arch) != api.supportedArchs.end())
    return;
  std::string names;
  for (int supported : api.supportedArchs)
    names += fmt::format("{}sm_{}", names.empty() ? "" : ", ", supported);
  throw CompileError(fmt::format("NVRTC {}.{} cannot compile {} for {}: it builds for {}", api.major, api.minor,
                                 options.programName, options.arch, names),
                     "", optionStrings);
}

Cubin Compiler::compile(const std::string &source, const CompileOptions &options) const {
  const int arch = requireRealArch(*this, options);
  const Nvrtc &api = nvrtc();
  std::vector<std::string> optionStrings = nvrtcOptions(options);
  requireSupportedArch(api, options, arch, optionStrings);
  std::string log;
  Cubin cubin;
  runNvrtc(api, source, options, optionStrings, log, [&](NvrtcProgram program) {
    size_t cubinSize = 0;
    if (api.getCubinSize(program, &cubinSize) != 0 || cubinSize == 0)
      throw CompileError(fmt::format("NVRTC produced no CUBIN for {} (arch {})", options.programName, options.arch),
                         log, optionStrings);
    cubin.image.resize(cubinSize);
    api.getCubin(program, cubin.image.data());
  });
  cubin.arch = options.arch;
  // NVRTC >= 12.9 on a machine with a driver may serve a program from the CUDA compute cache (~/.nv/ComputeCache)
  // without running ptxas, and then the log has no register/spill figures. Say so in the log rather than leave a
  // silently empty one; CUDA_CACHE_DISABLE=1 makes NVRTC compile for real.
  if (log.find("ptxas info") == std::string::npos)
    log += "tilec: NVRTC returned no ptxas -v output (the program was probably served from the CUDA compute "
           "cache); set CUDA_CACHE_DISABLE=1 to get register and spill figures\n";
  cubin.log = std::move(log);
  cubin.options = std::move(optionStrings);
  cubin.toolchain = toolchain().value_or(""); // NVRTC is loaded here, so it has one
  return cubin;
}

std::string Compiler::compilePtx(const std::string &source, const CompileOptions &options) const {
  // A virtual architecture (compute_90a) as given; a real one's virtual one: PTX for compute_90a, not SASS for sm_90a.
  const std::optional<ArchName> virtualArch = parseArch(options.arch, "compute_");
  const int arch = virtualArch ? virtualArch->number : requireRealArch(*this, options);
  const Nvrtc &api = nvrtc();
  std::vector<std::string> optionStrings = nvrtcOptions(options);
  optionStrings[0] = "--gpu-architecture=compute_" + options.arch.substr(virtualArch ? 8 : 3);
  optionStrings.erase(std::remove(optionStrings.begin(), optionStrings.end(), "--ptxas-options=-v"),
                      optionStrings.end());
  requireSupportedArch(api, options, arch, optionStrings);
  std::string log, ptx;
  runNvrtc(api, source, options, optionStrings, log, [&](NvrtcProgram program) {
    size_t size = 0;
    if (api.getPtxSize(program, &size) != 0 || size <= 1)
      throw CompileError(fmt::format("NVRTC produced no PTX for {} (arch {})", options.programName, options.arch),
                         log, optionStrings);
    ptx.resize(size);
    api.getPtx(program, ptx.data());
    ptx.resize(size - 1);
  });
  return ptx;
}

std::vector<PtxasFunctionInfo> parsePtxasInfo(std::string_view log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex shared(R"((\d+) bytes smem)");
  std::vector<PtxasFunctionInfo> functions;
  std::size_t begin = 0;
  while (begin < log.size()) {
    std::size_t end = log.find('\n', begin);
    if (end == std::string_view::npos)
      end = log.size();
    std::string line(log.substr(begin, end - begin));
    begin = end + 1;
    std::smatch match;
    if (std::regex_search(line, match, entry)) {
      functions.push_back({match[1].str()});
      continue;
    }
    if (functions.empty())
      continue;
    PtxasFunctionInfo &current = functions.back();
    if (std::regex_search(line, match, frame)) {
      current.stackFrameBytes = std::stoi(match[1].str());
      current.spillStoreBytes = std::stoi(match[2].str());
      current.spillLoadBytes = std::stoi(match[3].str());
    }
    if (std::regex_search(line, match, registers))
      current.registers = std::stoi(match[1].str());
    if (std::regex_search(line, match, shared))
      current.sharedBytes = std::stoi(match[1].str());
  }
  return functions;
}

std::optional<PtxasFunctionInfo> Cubin::ptxasInfo(std::string_view function) const {
  for (PtxasFunctionInfo &info : parsePtxasInfo(log))
    if (info.function == function)
      return info;
  return std::nullopt;
}

} // namespace tilec::runtime
