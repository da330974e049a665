/* cgen.h: the code generator, a validated program as source code, and the function it generates
 * for the host.
 *
 * One generator, two targets. CGEN_TARGET_C is plain C11 for the host: one function that runs
 * the program over an arena laid out as the cpu executor lays it out. CGEN_TARGET_CUDA is CUDA
 * C for one persistent kernel (device/compiled.cu compiles it with NVRTC and launches it). Both
 * hold one-element slots in local variables (registers), turn the records' loops and branches
 * into structured `for`/`if`/`switch` (a pc-dispatch loop where the control flow is
 * irreducible), and compute every op with the same kernels/ functions the executors call, so
 * the generated code raises the same statuses at the same records as the interpreters.
 *
 * The host function is what the tests compile with the system C compiler and compare with the
 * cpu executor, which proves the generator's semantics on any machine; the CUDA target shares
 * every decision except where a grid runs the program (shares, barriers, one-block regions).
 */
#ifndef CFX_CGEN_H
#define CFX_CGEN_H

#include <stddef.h>
#include <stdint.h>

#include "host/runtime/exec.h"
#include "host/program/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The record kinds the generator knows, one place: a program with any other kind is refused
 * ("record kind NAME is not known to the code generator"), and the executor then runs it with
 * its interpreter. A kind added to program.h is added here once its emission exists; until then
 * test_gen fails, since it wants every kind known. */
#define CGEN_KINDS(X)                                                                             \
    X(HALT) X(JUMP) X(JUMP_FALSE) X(JUMP_TRUE) X(SWITCH) X(TICK) X(ASSERT) X(PRINT)              \
    X(CHECK_INDEX) X(CHECK_DIVIDE) X(CHECK_STEP) X(UNARY) X(BINARY) X(REDUCE) X(DOT) X(MATMUL)    \
    X(TRANSPOSE) X(FILL) X(IOTA) X(COPY) X(CAST) X(WHERE) X(GET_ROW) X(SET_ROW) X(CALL)         \
    X(GET_BOX) X(SET_BOX) X(BROADCAST) X(CHECK_BOUND) X(GET_ITEM) X(SET_ITEM) X(GATHER) X(REDUCE_AXIS) X(PERMUTE)

enum cgen_target { CGEN_TARGET_C, CGEN_TARGET_CUDA };

typedef struct cgen_options {
    int target;         /* enum cgen_target */
    int force_dispatch; /* emit the pc-dispatch loop even where the structure is recognised */
    const char
        *entry; /* name of the generated function; NULL: "cgen_run" (C), "cfx_compiled" (CUDA) */
    /* CUDA, when the caller sets them (arrays of nrecords, zeroed): per record, the block and
     * the grid barriers the code written for it passes (a fused loop's count goes to its first
     * record; a barrier the plan puts before a record, to that record) */
    int32_t *block_barriers;
    int32_t *grid_barriers;
    int32_t *phases; /* and the trips to device memory its code makes one after another: a loop
                      * over tensors (the __syncthreads after it), a matrix-vector product, a
                      * combine (its partials out, then in) */
    /* CUDA: real products of at least this many multiply-adds end the launch, as the
     * interpreter's (SCHED_LAUNCH_PRODUCT_MIN where cuBLAS runs them); 0: every product inline */
    int64_t launch_product_min;
    /* CUDA: the grid the kernel runs in, at least (blocks, threads per block), or 0: unknown.
     * Where it is given, a loop may keep tensors in registers (each thread its elements of the
     * block's share); the kernel checks at its start that it got at least that grid. */
    int blocks, threads;
} cgen_options;

/* What the generator made of the program. */
typedef struct cgen_info {
    int structured;        /* 1: structured control flow; 0: the pc-dispatch loop */
    char why_dispatch[160]; /* why not structured, when it is not */
    int32_t blocks;        /* reachable basic blocks */
    int32_t loops, ifs, switches, gotos, breaks, continues;
    /* CUDA only */
    int32_t barriers;      /* grid barriers written into the kernel (not counting combines) */
    int32_t regions;       /* one-block regions ... */
    int32_t redundant;     /* ... of which every block runs its own copy (scalars only) */
    int needs_grid;        /* 1: split work or barriers: launch the full grid */
    int needs_block;       /* 1: some record works on a tensor: 256 threads per block */
    int64_t publish_bytes; /* one publish buffer (scalars of a region's exit); two are needed */
    int32_t launches;      /* records that end the launch: CALLs of binary kernels, products */
    int32_t inline_calls;  /* CALLs of kernels given by their source, written inline */
    int32_t alternates;    /* tensors whose two buffers alternate by loop iteration ... */
    int64_t alt_bytes;     /* ... the second buffers' bytes together (ck_args.alt) */
    int32_t aheads;        /* products computed an iteration ahead (host/gen/plan.h) */
} cgen_info;

/* Appends the source of a complete translation unit for p to out. p must have passed
 * prog_validate. Returns 0, or -1 with the reason in err: a record kind the generator does not
 * know, or out of memory. info may be NULL. Several units of the same target concatenate into
 * one (give each its own entry name).
 *
 * CALL: a kernel registered by its source (program.h's kernel_source) is written into the unit
 * and called where the record is, on both targets. A binary kernel is the host's business: the
 * C target calls the `call` hook; the CUDA kernel, like the interpreter, ends its launch there
 * (and at a product the plan launches): block 0 stores its scalars and replicas, thread 0 says
 * where the next launch resumes (ck_sync.resume) and either tail-launches the record's graph
 * and the kernel's own (CK_DEVICE_LAUNCH) or pauses with CK_STATUS_PAUSE for the host to do the
 * work and launch again; a launch starts by reloading the scalars where it resumes, passes a
 * grid barrier, and jumps to the code after that record (compiled_kernel.cuh). */
int cgen_emit(const cfx_prog *p, const cgen_options *opt, struct strbuf *out, cgen_info *info,
              char *err, size_t errlen);

/* ---- the generated host function (CGEN_TARGET_C) ----------------------------------------------
 * void ENTRY(cgen_host_args *a): runs the program to HALT or a stop, as cpu_run does. The
 * generated file includes this header (compile it with host/ and kernels/ on the include path)
 * and only the entry function has external linkage. */
typedef struct cgen_host_args {
    uint8_t *arena;                /* prog->arena_bytes: the const image, zeros, then each input
                                      in its slot; results are in their slots after an ok run */
    int64_t max_iters;             /* 0: no limit */
    const exec_atomic_int *cancel; /* may be NULL */
    /* PRINT: the record and its slot's bytes (may be NULL) */
    void (*print)(void *user, int32_t record, const void *data);
    void *print_user;
    /* CALL: the record; its operands are in the arena (scalars are written there before and
     * read back after). Non-zero, or no function, stops the run with CFX_ERROR. */
    int (*call)(void *user, int32_t record, uint8_t *arena);
    void *call_user;
    /* out, as exec_outcome */
    int32_t status;
    int32_t record;
    int64_t detail[2];
    int64_t iterations;
} cgen_host_args;

typedef void (*cgen_host_fn)(cgen_host_args *a);

/* The kernel of cuda-persistent's default (compiled) mode as the generator writes it for a GPU
 * of CGEN_DEFAULT_BLOCKS multiprocessors (an H100's or an H200's), products of at least
 * SCHED_LAUNCH_PRODUCT_MIN multiply-adds ending the launch (`cfx dump --kernel cuda`); or the
 * same program as the host function the C target writes (`--kernel c`). The executor builds
 * from this text, with a `#define CK_DEVICE_LAUNCH 1` (tail launches) or `#define CK_TRACE 1`
 * (a traced run) first where it wants them, and its grid's own block count. 0, or -1 with why. */
#define CGEN_DEFAULT_BLOCKS 132
int cgen_default_kernel(const cfx_prog *p, int target, struct strbuf *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
