/* nvtx.h: named ranges for Nsight Systems, as thin wrappers over NVTX 3.
 *
 * prof_push("compile") ... prof_pop() brackets a phase; the host-driven executor pushes one
 * range per record (`BINARY add @ 12:5`). NVTX 3 is header-only and does nothing until a tool
 * attaches, so the ranges stay in release builds. Without CUDA they compile to nothing.
 */
#ifndef CFX_NVTX_H
#define CFX_NVTX_H

#if defined(CFX_HAVE_CUDA) && !defined(CFX_NO_NVTX)
#include <nvtx3/nvToolsExt.h>
#define prof_push(name) ((void)nvtxRangePushA(name))
#define prof_pop() ((void)nvtxRangePop())
#else
#define prof_push(name) ((void)(name))
#define prof_pop() ((void)0)
#endif

#endif
