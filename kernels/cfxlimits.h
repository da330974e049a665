/* cfxlimits.h: every limit of cfx in one place, as Lua's llimits.h holds Lua's: what a
 * tensor, a source file, a graph, a program and an imported model may hold. Each is far above
 * what a real program needs and well inside the integer types that carry it, so a larger input
 * is a clear error, never an overflow. Raise one here and it is raised everywhere; the ones a
 * user meets are stated in docs/language.md and docs/onnx.md.
 *
 * The lowest layer (kernels/) holds it, so every layer reads the same numbers; the public
 * header's CFX_TYPE_MAX_RANK must equal CFX_MAX_RANK (host/program/program.c checks). The op
 * bodies include it, and with them an application's op given by its source and the generated
 * kernels: every name here has a prefix of its stage, never a bare MAX_. */
#ifndef CFX_LIMITS_H
#define CFX_LIMITS_H

#include <stdint.h>

/* ---- a tensor ----------------------------------------------------------------------------- */
#define CFX_MAX_RANK 5 /* dimensions */
#define K_MAX_RANK CFX_MAX_RANK /* the same, as the op bodies name it */
/* Largest tensor and arena a program may describe: keeps every byte offset, element count and
 * index product inside int64 and every element index inside int32 for the kernels. */
#define CFX_MAX_ELEMENTS ((int64_t)1 << 30)
#define CFX_MAX_ARENA ((int64_t)1 << 34)
#define CFX_MAX_DIM ((int64_t)INT32_MAX) /* one dimension as written in a type */

/* ---- source text and its tree ------------------------------------------------------------- */
/* Source files larger than this are refused: it keeps every position and length in an int. */
#define API_MAX_SOURCE ((long)64 << 20)
#define PARSE_MAX_DEPTH 256 /* nesting of expressions and blocks */
/* Syntax nodes (a name, a literal, an operator, a call, a statement: `y = y + 1` is 5) of one
 * graph as written, and of a whole file. Past either the parse stops at the statement that
 * crossed it, so compile memory stays within the caps (about 170 bytes a node). */
#define PARSE_MAX_GRAPH_NODES (1 << 20)
#define PARSE_MAX_FILE_NODES (1 << 21)
/* All graphs of a file together, once calls are inlined: bounds the work of lowering. */
#define CHECK_MAX_MODULE_NODES (1 << 24)
#define DESUGAR_MAX_TUPLE 64 /* items of one tuple */
#define CHECK_MAX_FOR_VARS 8 /* names a for loop binds */
#define CTX_MAX_ARGS 16 /* arguments, and results, of a registered kernel */
#define DIAG_MAX_ERRORS 50 /* after this many, one last line says how many were left out */
#define DIAG_MAX_MESSAGE 256 /* characters of one message; a longer one is cut and ends in "..." */

/* ---- lowering and the program ------------------------------------------------------------- */
/* Most records one graph may lower to, inlined calls included: a program past this is
 * reported as too large rather than built. */
#define LOWER_MAX_RECORDS (1 << 20)
#define LOWER_MAX_INLINE 64 /* nesting of inlined graph calls */
/* Most results of a reduction along an axis that is unrolled (one GET_BOX, REDUCE and SET_BOX
 * per result): a larger one is an error rather than a program of that many records. */
#define LOWER_MAX_AXIS_RESULTS 4096
/* Largest constant (bytes) that a broadcast of a constant is folded into at compile time,
 * instead of a BROADCAST record that repeats it every time it runs (a bias or a layer norm's
 * scale added to every row of a loop's activations). */
#define LOWER_FOLD_BROADCAST_BYTES (1 << 20)
/* A record that computes over this many elements or more (its result or its operand b) reads the
 * cancel flag before it starts, on the cpu executor and in the generated code alike
 * (rec_polls_cancel), so that a run with no loop stops at its next large record */
#define CFX_CANCEL_CHECK_ELEMENTS 65536
/* The program builder's: far above any real graph, well inside int32. */
#define PROG_MAX_RECORDS (1 << 24)
#define PROG_MAX_SLOTS (1 << 24)
#define PROG_MAX_TABLE (1 << 24)
#define PROG_MAX_STRINGS (1 << 26)
/* Nesting of inlined blocks beyond which the generator writes the dispatch loop instead:
 * keeps the recursion of the emitter (and the C compiler's) shallow on any input. */
#define CGEN_MAX_DEPTH 1000

/* ---- files and models --------------------------------------------------------------------- */
/* Longest .npy header accepted when reading; numpy writes fewer than 200 bytes for cfx's types. */
#define NPY_MAX_HEADER 65536
/* What the ONNX importer takes (docs/onnx.md). */
#define ONNX_OPSET_MIN 1
#define ONNX_OPSET_FULL 7 /* below it, node by node: an op whose definition changed since is refused */
#define ONNX_OPSET_MAX 28
#define ONNX_INLINE_MAX 16 /* constants of at most this many elements are written out */
#define ONNX_FOLD_MAX 65536 /* a node is folded at import when its result is no larger */
#define ONNX_UNROLL_SMALL 64  /* a batched MatMul, or a Transpose swapping the last two axes, over
                               * at most this many batch elements is the language's unrolled
                               * `@`/permute; over more, a loop */
#define ONNX_UNROLL_MAX 4096  /* any other Transpose is permute up to the language's limit of
                               * blocks it unrolls, element by element past it */
#define ONNX_MAX_DEPTH 64 /* subgraphs and functions nested */
#define ONNX_UNROLL_MAX_NODES 4096 /* a Loop or SequenceMap over a sequence of items of differing
                                   * shapes is unrolled at import: at most this many nodes in all */
#define ONNX_MAX_MODEL ((size_t)1 << 31)
/* protobuf-c unpacks nested messages by recursion: a model nested deeper is refused first */
#define ONNX_MAX_NESTING 400

#endif
