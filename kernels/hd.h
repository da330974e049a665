/* hd.h: the one macro that makes a function callable from host and device code.
 * Under nvcc it is __host__ __device__; under a C compiler it is plain static inline. */
#ifndef CFX_HD_H
#define CFX_HD_H

#ifdef __CUDACC__
#define CFX_HD static __host__ __device__ __forceinline__
#else
#define CFX_HD static inline
#endif

/* The host stand-in's race detector (tests/race_host.h): bytes [p, p + n) read or written by
 * the running CUDA thread. Nothing anywhere else: the device and the CPU executor never see
 * them. K_RACE_RS: a read of shared memory whose every write the hooks see (a block
 * reduction's slots, a tile), which must have been written in the launch. K_RACE_R_STRIDED:
 * `count` reads of `size` bytes, `stride` bytes apart (a lane's chunks of a row, a column).
 * K_RACE_RANGE_R: elements [lo, hi) of `size` bytes, or element 0 alone where `stride`
 * is 0 (a broadcast operand). */
#ifndef K_RACE_R
#define K_RACE_R(p, n) ((void)0)
#define K_RACE_W(p, n) ((void)0)
#define K_RACE_RS(p, n) ((void)0)
#define K_RACE_R_STRIDED(p, count, stride, size) ((void)0)
#define K_RACE_RS_STRIDED(p, count, stride, size) ((void)0)
#endif
#define K_RACE_RANGE_R(p, lo, hi, stride, size)                                                   \
    K_RACE_R((const char *)(p) + ((stride) ? (lo) * (int64_t)(size) : 0),                       \
             (hi) > (lo) ? ((stride) ? ((hi) - (lo)) * (int64_t)(size) : (int64_t)(size)) : 0)
#define K_RACE_RANGE_W(p, lo, hi, size)                                                           \
    K_RACE_W((char *)(p) + (lo) * (int64_t)(size), (hi) > (lo) ? ((hi) - (lo)) * (int64_t)(size) : 0)

#endif
