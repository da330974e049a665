/* hd.h: the one macro that makes a function callable from host and device code.
 * Under nvcc it is __host__ __device__; under a C compiler it is plain static inline. */
#ifndef CFX_HD_H
#define CFX_HD_H

#ifdef __CUDACC__
#define CFX_HD static __host__ __device__ __forceinline__
#else
#define CFX_HD static inline
#endif

#endif
