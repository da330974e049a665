/* fake_cudart.c: a stand-in for the CUDA runtime, built as libcudart.so.N into
 * build/tests/fake_cuda/ for test_cuda_module.sh. It says one device is present and has no
 * other function, so on a machine without a GPU the loader goes on to the module, and the
 * module (whose CUDA calls this library lacks) fails to load as it would against a runtime
 * that does not match it. */
int cudaGetDeviceCount(int *count);
int cudaGetLastError(void);
const char *cudaGetErrorName(int e);
const char *cudaGetErrorString(int e);

int cudaGetDeviceCount(int *count)
{
    *count = 1;
    return 0;
}

int cudaGetLastError(void) { return 0; }
const char *cudaGetErrorName(int e) { return e ? "cudaErrorUnknown" : "cudaSuccess"; }
const char *cudaGetErrorString(int e) { return e ? "unknown error" : "no error"; }
