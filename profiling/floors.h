/* floors.h: the floors every benchmark figure is read against, measured on one GPU.
 *
 * Each floor is the least a mechanism can cost on this device, timed with CUDA events in
 * the same run as the benchmark (architecture.md, "CUDA facts that shape the design"):
 *   launch         an empty kernel launched from the host (back to back, per launch)
 *   d2h_sync       a 4-byte device-to-host copy followed by a stream sync: the price of one
 *                  decision taken on the host
 *   while_iter     one iteration of a CUDA-graph WHILE conditional node whose body is one
 *                  kernel that decrements a counter and sets the condition
 *   grid_barrier   one pass of the cuda-persistent executor's own grid barrier
 *                  (device/grid_barrier.cuh: arrival counter + generation, the status poll
 *                  while waiting, block 0's cancel poll), in a grid shaped as the executor
 *                  shapes its own (256 threads, up to 2 blocks per multiprocessor)
 *   block_barrier  one __syncthreads() in a block of 256 threads
 *   bandwidth      device memory bandwidth of a large device-to-device copy, bytes read plus
 *                  bytes written over the time
 *   l2_read        reads of a 16 MiB buffer that L2 holds, read again and again by the
 *                  executor's grid (16-byte loads that skip L1): what a tensor kept in L2 by
 *                  the executors' L2 window (docs/persistent.md) can be read at
 *   tail_self      a kernel in the executor's grid shape, the node of a device graph, that
 *                  ends and tail-launches its own graph (floors_launch.cu)
 *   tail_site      the same tail-launching an empty graph first, then itself: what cuda-
 *                  persistent's device graph launch pays per CALL or launched product,
 *                  less the work
 * The loop floors (while_iter and the barriers) are differential: (t(n2) - t(n1)) / (n2 -
 * n1), so the one launch around the loop cancels out.
 *
 * Implemented in floors.cu, compiled only when cfx is built with CUDA. Plain C interface.
 */
#ifndef CFX_FLOORS_H
#define CFX_FLOORS_H

#include <stddef.h>

#ifdef __CUDACC__
/* The same contract as dev.h's CUDA_TRY (the enclosing function has err, errlen and a
 * fail: label), kept local so the floors call nothing in the executors they judge; the one
 * piece they share is the grid barrier's device code (grid_barrier.cuh), so that its floor
 * is the barrier the executor passes. Every local is declared before the first FL_TRY:
 * C++ forbids a goto over an initialization. */
#define FL_TRY(call)                                                                      \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            snprintf(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call,            \
                     cudaGetErrorString(e_));                                             \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)
#define FL_LAUNCHED() FL_TRY(cudaGetLastError())
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One measured quantity: the median and the spread over `repeats` measurements. For the
 * time floors the unit is microseconds; for bandwidth it is GB/s (10^9 bytes per second). */
typedef struct floor_stat {
    double median;
    double min;
    double max;
    int repeats;
} floor_stat;

/* Grid barrier designs timed beside the executor's (floors.cu), by name. */
#define FL_BARRIER_VARIANTS 4
extern const char *const floors_barrier_variant_names[FL_BARRIER_VARIANTS];

typedef struct floors {
    floor_stat launch_us;
    floor_stat d2h_sync_us;
    floor_stat while_iter_us;
    floor_stat grid_barrier_us;
    floor_stat block_barrier_us;
    floor_stat bandwidth_gbs;
    floor_stat l2_read_gbs;
    floor_stat tail_self_us;
    floor_stat tail_site_us;
    int tail_blocks;        /* blocks of the tail-launching kernel; 0: not measured */
    char tail_note[200];    /* why the tail-launch floors were not measured, or "" */
    int grid_blocks;        /* blocks in the grid-barrier kernel (the executor's grid rule) */
    int block_threads;      /* threads per block in both barrier kernels */
    floor_stat barrier_variant_us[FL_BARRIER_VARIANTS];
    int barrier_variant_blocks[FL_BARRIER_VARIANTS];
    double copy_bytes;      /* bytes read + written by one bandwidth copy */
} floors;

/* What the device is, for the report: name, multiprocessors, memory, driver and runtime
 * versions. Returns 0, or -1 with a reason in err (no device, say). */
typedef struct floors_device {
    char name[256];
    int sms;
    int cc_major, cc_minor;
    double memory_gib;
    int driver_version;   /* CUDA driver API version, 13000 = 13.0 */
    int runtime_version;
} floors_device;

int floors_device_info(floors_device *out, char *err, size_t errlen);

/* Measures every floor on the current device. `quick` uses fewer repeats. Returns 0, or -1
 * with the failing call in err. Device graph launch may not work where the others do: its
 * floors then say why in tail_note (tail_blocks 0) and the measurement still succeeds. */
int floors_measure(floors *out, int quick, char *err, size_t errlen);
/* floors_launch.cu: tail_self and tail_site alone; 0, or -1 with why in err. */
int floors_measure_tail(floors *out, int quick, char *err, size_t errlen);
/* Median, min and max of v[0..n) (sorts v). */
floor_stat floors_summarize(double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
