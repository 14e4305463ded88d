// What both module examples share: run one entry of a loaded module on random inputs made from its signature
// (tilec::runtime::makeHostArguments), as `tilec run --target cuda` does, and summarise the outputs.
//
// Command-line tail: ENTRY [--dim name=N]... [--zero param]... [--seed S]
#pragma once

#include <tilec/runtime/Error.h>
#include <tilec/runtime/HostTensor.h>
#include <tilec/runtime/Module.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace example {

namespace rt = tilec::runtime;

// Parses argv[first..] and runs the entry; returns the process exit status. Without a CUDA driver it says so and
// returns 0 (the examples also run in CI, which has no GPU).
inline int runEntry(const rt::Module &module, int argc, char **argv, int first) {
  if (first >= argc) {
    std::fprintf(stderr, "expected an entry name, then --dim name=N, --zero param, --seed S\n");
    return 2;
  }
  std::string name = argv[first];
  rt::HostArgumentRequest request;
  for (int i = first + 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      return 2;
    }
    std::string value = argv[++i];
    if (flag == "--dim" && value.find('=') != std::string::npos)
      request.dims[value.substr(0, value.find('='))] = std::atoll(value.substr(value.find('=') + 1).c_str());
    else if (flag == "--zero")
      request.zeros.push_back(value);
    else if (flag == "--seed")
      request.seed = std::strtoull(value.c_str(), nullptr, 10);
    else {
      std::fprintf(stderr, "unknown option %s %s\n", flag.c_str(), value.c_str());
      return 2;
    }
  }
  try {
    const rt::Entry &entry = module.entry(name);
    std::vector<rt::HostTensor> args = rt::makeHostArguments(entry.signature(), request);
    double seconds = rt::runOnDevice(entry, args);
    std::printf("%s ran on the GPU in %.3f ms\n", name.c_str(), seconds * 1e3);
    bool finite = true;
    for (std::size_t p = 0; p < args.size(); ++p) {
      double sumOfSquares = 0;
      for (std::int64_t i = 0; i < args[p].numel(); ++i)
        sumOfSquares += args[p].get(i) * args[p].get(i);
      finite = finite && std::isfinite(sumOfSquares);
      std::printf("  %-8s rms %.5g\n", entry.signature().params()[p].name.c_str(),
                  args[p].numel() ? std::sqrt(sumOfSquares / double(args[p].numel())) : 0.0);
    }
    return finite ? 0 : 1;
  } catch (const rt::NoDriverError &error) {
    std::printf("not run: %s\n", error.what());
    return 0;
  } catch (const rt::Error &error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}

} // namespace example
