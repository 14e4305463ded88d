// tilec_c.h over the C++ runtime: exceptions become error codes and messages at this boundary.
#include "tilec_c.h"

#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/ModuleFile.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rt = tilec::runtime;

struct tilec_module {
  std::shared_ptr<rt::Module> module;
  std::vector<std::string> entries;
};

namespace {

int report(char *error, size_t size, int code, const std::string &message) {
  if (error && size > 0) {
    size_t n = std::min(size - 1, message.size());
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return code;
}

// Runs `body`, mapping the runtime's exceptions to codes.
template <typename Body> int guarded(char *error, size_t size, Body body) {
  try {
    body();
    return TILEC_OK;
  } catch (const rt::ArgumentError &e) {
    return report(error, size, TILEC_ARGUMENT_ERROR, e.what());
  } catch (const rt::PlanError &e) {
    return report(error, size, TILEC_PLAN_ERROR, e.what());
  } catch (const std::exception &e) {
    return report(error, size, TILEC_ERROR, e.what());
  } catch (...) {
    return report(error, size, TILEC_ERROR, "unknown error");
  }
}

} // namespace

extern "C" {

const char *tilec_version(void) { return TILEC_VERSION; }

int tilec_module_load(const char *path, tilec_module **module, char *error, size_t error_size) {
  if (!path || !module)
    return report(error, error_size, TILEC_ERROR, "tilec_module_load: path and module must not be NULL");
  *module = nullptr;
  return guarded(error, error_size, [&] {
    auto m = std::make_unique<tilec_module>();
    m->module = rt::loadModuleFile(path);
    for (const auto &e : m->module->entries())
      m->entries.push_back(e->name());
    *module = m.release();
  });
}

void tilec_module_free(tilec_module *module) { delete module; }

int64_t tilec_module_entry_count(const tilec_module *module) {
  return module ? static_cast<int64_t>(module->entries.size()) : 0;
}

const char *tilec_module_entry_name(const tilec_module *module, int64_t index) {
  if (!module || index < 0 || index >= static_cast<int64_t>(module->entries.size()))
    return nullptr;
  return module->entries[index].c_str();
}

int tilec_module_launch(const tilec_module *module, const char *entry, const DLTensor *args, int64_t count,
                        void *stream, char *error, size_t error_size) {
  if (!module || !entry || (count > 0 && !args) || count < 0)
    return report(error, error_size, TILEC_ERROR, "tilec_module_launch: module, entry and args must be valid");
  return guarded(error, error_size, [&] {
    const rt::Entry &e = module->module->entry(entry);
    std::vector<rt::TensorView> views;
    views.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      try {
        views.push_back(rt::TensorView::fromDLPack(args[i]));
      } catch (const rt::ArgumentError &) {
        throw;
      } catch (const rt::Error &problem) {
        const auto &params = e.signature().params();
        std::string name = i < static_cast<int64_t>(params.size()) ? params[i].name : "#" + std::to_string(i);
        throw rt::ArgumentError(name, "entry '" + std::string(entry) + "', argument #" + std::to_string(i) + " '" +
                                          name + "': " + problem.what());
      }
    }
    e.launch(static_cast<rt::cu::Stream>(stream), views.data(), views.size());
  });
}

int tilec_release_cached_memory(char *error, size_t error_size) {
  return guarded(error, error_size, [&] {
    std::shared_ptr<rt::Driver> driver;
    try {
      driver = rt::Driver::load();
    } catch (const rt::NoDriverError &) {
      return; // no driver, so nothing was ever cached
    }
    driver->releaseCachedWorkspaces();
  });
}

} // extern "C"
