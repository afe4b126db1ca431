/* Stand-in for the NVIDIA driver library (libcuda.so.1) on machines without one.
 *
 * The PyPI legate wheel links libcuda.so.1.  Without a driver it cannot even be imported.
 * This library answers every call with CUDA_ERROR_NO_DEVICE (100), which legate reads as
 * "no GPU here" and goes on CPU-only.  It is built and used only where no real driver is found
 * (see legate_prof/cuda_stub.py); it never shadows a real libcuda.
 */
#include <stddef.h>
#include <string.h>

#define CUDA_ERROR_NO_DEVICE 100

typedef int CUresult;

static CUresult no_device(void) { return CUDA_ERROR_NO_DEVICE; }

CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_ERROR_NO_DEVICE; }

CUresult cuDriverGetVersion(int *version) {
  if (version) *version = 12000;
  return CUDA_ERROR_NO_DEVICE;
}

CUresult cuDeviceGetCount(int *count) {
  if (count) *count = 0;
  return CUDA_ERROR_NO_DEVICE;
}

CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str);

/* Functions whose out-parameters callers read even on failure get their real stand-in. */
static void *lookup(const char *symbol) {
  if (symbol == NULL) return (void *)&no_device;
  if (strcmp(symbol, "cuGetErrorName") == 0) return (void *)&cuGetErrorName;
  if (strcmp(symbol, "cuGetErrorString") == 0) return (void *)&cuGetErrorString;
  if (strcmp(symbol, "cuInit") == 0) return (void *)&cuInit;
  if (strcmp(symbol, "cuDriverGetVersion") == 0) return (void *)&cuDriverGetVersion;
  if (strcmp(symbol, "cuDeviceGetCount") == 0) return (void *)&cuDeviceGetCount;
  return (void *)&no_device;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                          unsigned long long flags, void *status) {
  (void)symbol; (void)version; (void)flags;
  if (status) *(int *)status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
  if (pfn) *pfn = lookup(symbol);
  return 0;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                             unsigned long long flags, void *status) {
  return cuGetProcAddress(symbol, pfn, version, flags, status);
}

CUresult cuGetErrorName(CUresult error, const char **str) {
  if (str) *str = (error == CUDA_ERROR_NO_DEVICE) ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

CUresult cuGetErrorString(CUresult error, const char **str) {
  if (str) *str = (error == CUDA_ERROR_NO_DEVICE) ? "no CUDA-capable device is detected"
                                                  : "unknown error";
  return 0;
}

CUresult cuMemFree_v2(unsigned long long ptr) { (void)ptr; return 0; }
CUresult cuMemFreeHost(void *ptr) { (void)ptr; return 0; }

/* Marker so legate_prof can tell this stand-in from a real driver. */
int legate_prof_cuda_stub(void) { return 1; }
