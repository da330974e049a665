/* cpu_linalg.h: the cpu executor's products, dots and whole-tensor reductions
 * (host/runtime/cpu_linalg.c), in one of two accumulation modes. */
#ifndef CFX_CPU_LINALG_H
#define CFX_CPU_LINALG_H

#include <stddef.h>
#include <stdint.h>

/* CPU_ACC_F64: bit-identical to the kernels/ reference bodies (f32 accumulates in double);
 * CPU_ACC_FAST: f32 in f32 in a CBLAS's order (or cfx's own blocked kernels). */
enum { CPU_ACC_F64 = 0, CPU_ACC_FAST = 1 };

/* 1 when the fast mode's f32/f64 products go to a CBLAS: this build found one at configure
 * and it opens here (the first call opens it). */
int cpu_have_blas(void);
/* 1: the fast mode runs cfx's own kernels even where a CBLAS opens (for the tests); 0: back. */
void cpu_blas_off(int off);
/* The CBLAS this build found at configure (its soname), NULL for none; opens nothing. */
const char *cpu_blas_built(void);
/* One line on the BLAS the fast mode's products go to (opening it, as the first product does):
 * "OpenBLAS 0.3.21 (libopenblas.so.0), kernels SkylakeX (chosen by cfx: ...)", or "none: why". */
void cpu_blas_describe(char *buf, size_t len);

/* What the processor offers OpenBLAS's kernel sets (and the OS saves the registers of). */
enum { CPU_HAS_AVX2_FMA = 1, CPU_HAS_AVX512 = 2 /* F, CD, BW, DQ and VL */ };
int cpu_blas_features(void);
/* The kernel set (OPENBLAS_CORETYPE) to open OpenBLAS with again at its first load, or NULL
 * to keep what it chose, with why in *why (static text). corename: what the OpenBLAS opened
 * says it took (openblas_get_corename; NULL: not OpenBLAS); openblas_coretype and cfx_coretype:
 * $OPENBLAS_CORETYPE and $CFX_BLAS_CORETYPE (NULL when unset). The rule: the user's
 * OPENBLAS_CORETYPE (set at all, even empty) is never overridden; CFX_BLAS_CORETYPE=off keeps
 * OpenBLAS's choice, another value (but empty) is taken when it is a known kernel set the
 * processor can run; otherwise a kernel set without AVX2 (Prescott, Core2, Nehalem,
 * Sandybridge, ..., as OpenBLAS falls back to for a processor it does not know) on a processor
 * with AVX2 and FMA is replaced by SkylakeX where the processor has AVX-512, else Haswell.
 * Pure: tests give it made-up inputs. */
const char *cpu_blas_coretype_choice(int features, const char *corename, const char *openblas_coretype,
                                     const char *cfx_coretype, const char **why);
/* dst[m,n] = a[m,k] @ b[k,n] (n = 1 for a vector b), row-major, dst apart from a and b. */
void cpu_matmul(int dtype, int mode, void *dst, const void *a, const void *b, int64_t m, int64_t k,
                int64_t n);
/* Rows of A per cpu_matmul call when a product is cut into bands (to read a cancel flag
 * between them): about 2^24 multiply-adds for cfx's own kernels (a few milliseconds); for the
 * BLAS, 2^30 and at least 256 rows, since every call packs all of B again and splits its rows
 * among the BLAS's threads (a 1024^3 product in bands of 16 rows ran 2 to 4x slower than in
 * one call). At least 1, at most m. */
int64_t cpu_matmul_band(int dtype, int mode, int64_t m, int64_t k, int64_t n);
/* *dst = a . b over n elements. */
void cpu_dot(int dtype, int mode, void *dst, const void *a, const void *b, int64_t n);
/* the REDUCE record: *dst = op over the n elements of src */
void cpu_reduce(int op, int dtype, int mode, void *dst, const void *src, int64_t n);
/* The same on up to `threads` threads (host/runtime/pool.c): the fast mode's sums, means, norms
 * and (without a BLAS) dots of real tensors in fixed chunks whose partials add in chunk order,
 * and its extremes in ranges compared in order, the same bits whatever the count; the BLAS's
 * dot on the BLAS's threads (cpu_blas_threads). cpu_dot and cpu_reduce are these with one. */
void cpu_dot_threads(int dtype, int mode, int threads, void *dst, const void *a, const void *b, int64_t n);
void cpu_reduce_threads(int op, int dtype, int mode, int threads, void *dst, const void *src, int64_t n);
/* REDUCE_AXIS's runs along the last axis: dst[r] = cpu_reduce of row r of src [rows, n], the same
 * bits as `rows` calls of cpu_reduce (the fast mode's short sums without its set-up per row). */
void cpu_reduce_rows(int op, int dtype, int mode, void *dst, const void *src, int64_t rows, int64_t n);
/* Sets the CBLAS's thread count (the process's; through openblas_set_num_threads or
 * bli_thread_set_num_threads where the library has one, opening the BLAS), when it differs
 * from the count last set; cpu.c calls it before the fast mode's products and dots of an
 * executor whose count was set. */
void cpu_blas_threads(int threads);

#endif
