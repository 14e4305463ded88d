/* tilec's C API: load a module file (.tcm, from `tilec compile`) and launch its entries on DLPack tensors. A thin,
 * ABI-stable layer over the C++ runtime for hosts that cannot use C++ directly: the Python package (through ctypes,
 * so one library serves every Python version), C, Rust or Julia hosts.
 *
 * Every call returns TILEC_OK or an error code and, on error, writes a message (NUL-terminated, truncated to
 * `error_size`) into `error` when it is not NULL. A launch whose arguments do not fit the entry's signature returns
 * TILEC_ARGUMENT_ERROR before anything is enqueued; the message names the parameter. */
#ifndef TILEC_C_H
#define TILEC_C_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_C_API __attribute__((visibility("default")))

enum {
  TILEC_OK = 0,
  TILEC_ERROR = 1,          /* anything else: no driver, a bad module file, a failed launch, ... */
  TILEC_ARGUMENT_ERROR = 2, /* an argument does not fit the entry's signature (nothing was launched) */
  TILEC_PLAN_ERROR = 3,     /* the launch plan cannot be evaluated for these arguments (nothing was launched) */
};

typedef struct tilec_module tilec_module;

/* The library's version, "0.1.0". */
TILEC_C_API const char *tilec_version(void);

/* Loads `path` into the current CUDA context (the primary context of device 0 when none is current). */
TILEC_C_API int tilec_module_load(const char *path, tilec_module **module, char *error, size_t error_size);
TILEC_C_API void tilec_module_free(tilec_module *module);

/* The number of entries, and the name of entry `index` (owned by the module). */
TILEC_C_API int64_t tilec_module_entry_count(const tilec_module *module);
TILEC_C_API const char *tilec_module_entry_name(const tilec_module *module, int64_t index);

/* Launches entry `entry` on `stream` (a CUstream; NULL: the legacy default stream) with `count` arguments, in the
 * signature's order. Asynchronous, like the C++ Entry::launch. */
TILEC_C_API int tilec_module_launch(const tilec_module *module, const char *entry, const DLTensor *args, int64_t count,
                                    void *stream, char *error, size_t error_size);

/* Returns the device memory that launches keep cached for their workspaces (tilec's workspace pools, one per
 * device; freed workspaces stay reserved across synchronizations unless $TILEC_WORKSPACE_CACHE_BYTES says
 * otherwise) to the driver, except what a launch still in flight uses. TILEC_OK, with nothing to do, when no
 * CUDA driver is loaded. */
TILEC_C_API int tilec_release_cached_memory(char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
