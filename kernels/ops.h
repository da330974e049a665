/* ops.h: the one list of built-in ops.
 *
 * X(NAME, SPELLING, ARITY, CLASS, INFIX)
 *   SPELLING  the name in the language (`add`), or "" for ops reached only by syntax
 *   ARITY     number of tensor operands
 *   CLASS     the type rule, one of the OPC_* below; the checker applies it, the lowering
 *             picks the record kind from it, the kernels implement it
 *   INFIX     the infix spelling (`+`), or NULL
 *
 * The enum (OP_*) is generated here; the spelling, infix, arity and class tables are generated
 * from this list in host/program/ops.c.
 * The bodies live in kernels/elementwise.h, kernels/reduce.h and kernels/linalg.h, written
 * once as host+device functions and switched on by every executor.
 *
 * `max` and `min` are both elementwise (two operands) and reductions (one); the two
 * entries share a spelling and the checker picks by the number of arguments.
 */
#ifndef CFX_OPS_H
#define CFX_OPS_H

enum op_class {
    OPC_UNARY_REAL,    /* f32/f64 -> same: exp log sqrt tanh sigmoid sin cos tan floor ceil round erf
                        * atan asin acos asinh acosh atanh round_f16 round_bf16
                        * round_f8e4m3fn round_f8e4m3fnuz round_f8e5m2 round_f8e5m2fnuz
                        * round_f4e2m1 round_f8e8m0 */
    OPC_UNARY_NUM,     /* i32/i64/f32/f64 -> same: neg abs relu sign */
    OPC_UNARY_BOOL,    /* bool -> bool: not */
    OPC_UNARY_INT,     /* i32/i64 -> same: invert (~) */
    OPC_BINARY_NUM,    /* numeric x numeric (same dtype) -> same dtype */
    OPC_BINARY_REAL,   /* real x real (same dtype) -> same dtype: atan2 */
    OPC_BINARY_BOOL,   /* bool x bool -> bool: and or (elementwise form) */
    OPC_BINARY_INT,    /* integer x integer (same dtype) -> same dtype: & | ^ << >> (the checker
                        * writes & | ^ of two bools as and, or, !=) */
    OPC_COMPARE,       /* same dtype -> bool; lt le gt ge numeric only, eq ne any dtype */
    OPC_REDUCE_NUM,    /* numeric tensor -> scalar of the same dtype: sum max min */
    OPC_REDUCE_REAL,   /* real tensor -> scalar of the same dtype: mean norm */
    OPC_REDUCE_ARG,    /* numeric tensor -> i32 scalar: argmax argmin */
    OPC_REDUCE_BOOL,   /* bool tensor -> bool scalar: all any */
    OPC_DOT,           /* numeric 1-D x same -> scalar */
    OPC_MATMUL,        /* numeric [m,k] x [k,n] -> [m,n], [m,k] x [k] -> [m] */
    OPC_TRANSPOSE,     /* 2-D -> 2-D */
    OPC_MAKE_TYPE,     /* (TYPE) -> TYPE: zeros ones iota */
    OPC_FULL,          /* (TYPE, scalar) -> TYPE */
    OPC_COPY,          /* x -> same type */
    OPC_CAST,          /* (x, DTYPE) -> x's shape with DTYPE */
    OPC_WHERE,         /* (bool c, a, b) -> a's type; one-element operands broadcast */
    OPC_LEN,           /* (x) -> i32, known at compile time */
};

#define CFX_OPS(X) \
    /* elementwise, one operand */ \
    X(NEG,     "neg",     1, OPC_UNARY_NUM,   "-") \
    X(ABS,     "abs",     1, OPC_UNARY_NUM,   NULL) \
    X(RELU,    "relu",    1, OPC_UNARY_NUM,   NULL) \
    X(EXP,     "exp",     1, OPC_UNARY_REAL,  NULL) \
    X(LOG,     "log",     1, OPC_UNARY_REAL,  NULL) \
    X(SQRT,    "sqrt",    1, OPC_UNARY_REAL,  NULL) \
    X(TANH,    "tanh",    1, OPC_UNARY_REAL,  NULL) \
    X(SIGMOID, "sigmoid", 1, OPC_UNARY_REAL,  NULL) \
    X(SIN,     "sin",     1, OPC_UNARY_REAL,  NULL) \
    X(COS,     "cos",     1, OPC_UNARY_REAL,  NULL) \
    X(TAN,     "tan",     1, OPC_UNARY_REAL,  NULL) \
    X(FLOOR,   "floor",   1, OPC_UNARY_REAL,  NULL) \
    X(CEIL,    "ceil",    1, OPC_UNARY_REAL,  NULL) \
    X(ROUND,   "round",   1, OPC_UNARY_REAL,  NULL) \
    X(ERF,     "erf",     1, OPC_UNARY_REAL,  NULL) \
    X(ATAN,    "atan",    1, OPC_UNARY_REAL,  NULL) \
    X(ASIN,    "asin",    1, OPC_UNARY_REAL,  NULL) \
    X(ACOS,    "acos",    1, OPC_UNARY_REAL,  NULL) \
    X(ASINH,   "asinh",   1, OPC_UNARY_REAL,  NULL) \
    X(ACOSH,   "acosh",   1, OPC_UNARY_REAL,  NULL) \
    X(ATANH,   "atanh",   1, OPC_UNARY_REAL,  NULL) \
    X(SIGN,    "sign",    1, OPC_UNARY_NUM,   NULL) \
    X(ROUND_F16, "round_f16", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_BF16, "round_bf16", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F8E4M3FN, "round_f8e4m3fn", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F8E4M3FNUZ, "round_f8e4m3fnuz", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F8E5M2, "round_f8e5m2", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F8E5M2FNUZ, "round_f8e5m2fnuz", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F4E2M1, "round_f4e2m1", 1, OPC_UNARY_REAL, NULL) \
    X(ROUND_F8E8M0, "round_f8e8m0", 1, OPC_UNARY_REAL, NULL) \
    X(NOT,     "not",     1, OPC_UNARY_BOOL,  "not") \
    X(INVERT,  "invert",  1, OPC_UNARY_INT,   "~") \
    /* elementwise, two operands */ \
    X(ADD,     "add",     2, OPC_BINARY_NUM,  "+") \
    X(SUB,     "sub",     2, OPC_BINARY_NUM,  "-") \
    X(MUL,     "mul",     2, OPC_BINARY_NUM,  "*") \
    X(DIV,     "div",     2, OPC_BINARY_NUM,  "/") \
    X(MOD,     "mod",     2, OPC_BINARY_NUM,  "%") \
    X(FLOORDIV, "floordiv", 2, OPC_BINARY_NUM, "//") \
    X(TRUNCDIV, "truncdiv", 2, OPC_BINARY_NUM, NULL) \
    X(FMOD,    "fmod",    2, OPC_BINARY_NUM,  NULL) \
    X(MIN,     "min",     2, OPC_BINARY_NUM,  NULL) \
    X(MAX,     "max",     2, OPC_BINARY_NUM,  NULL) \
    X(POW,     "pow",     2, OPC_BINARY_NUM,  "**") \
    X(ATAN2,   "atan2",   2, OPC_BINARY_REAL, NULL) \
    X(AND,     "",        2, OPC_BINARY_BOOL, "and") \
    X(OR,      "",        2, OPC_BINARY_BOOL, "or") \
    X(BITAND,  "bitwise_and", 2, OPC_BINARY_INT, "&") \
    X(BITOR,   "bitwise_or",  2, OPC_BINARY_INT, "|") \
    X(BITXOR,  "bitwise_xor", 2, OPC_BINARY_INT, "^") \
    X(LSHIFT,  "left_shift",  2, OPC_BINARY_INT, "<<") \
    X(RSHIFT,  "right_shift", 2, OPC_BINARY_INT, ">>") \
    /* comparisons, to bool */ \
    X(LT,      "lt",      2, OPC_COMPARE,     "<") \
    X(LE,      "le",      2, OPC_COMPARE,     "<=") \
    X(GT,      "gt",      2, OPC_COMPARE,     ">") \
    X(GE,      "ge",      2, OPC_COMPARE,     ">=") \
    X(EQ,      "eq",      2, OPC_COMPARE,     "==") \
    X(NE,      "ne",      2, OPC_COMPARE,     "!=") \
    /* reductions, to a scalar */ \
    X(SUM,     "sum",     1, OPC_REDUCE_NUM,  NULL) \
    X(MEAN,    "mean",    1, OPC_REDUCE_REAL, NULL) \
    X(RMAX,    "max",     1, OPC_REDUCE_NUM,  NULL) \
    X(RMIN,    "min",     1, OPC_REDUCE_NUM,  NULL) \
    X(ARGMAX,  "argmax",  1, OPC_REDUCE_ARG,  NULL) \
    X(ARGMIN,  "argmin",  1, OPC_REDUCE_ARG,  NULL) \
    X(ALL,     "all",     1, OPC_REDUCE_BOOL, NULL) \
    X(ANY,     "any",     1, OPC_REDUCE_BOOL, NULL) \
    X(NORM,    "norm",    1, OPC_REDUCE_REAL, NULL) \
    X(DOT,     "dot",     2, OPC_DOT,         NULL) \
    /* linear algebra */ \
    X(MATMUL,  "matmul",  2, OPC_MATMUL,      "@") \
    X(TRANSPOSE, "transpose", 1, OPC_TRANSPOSE, NULL) \
    /* making tensors */ \
    X(ZEROS,   "zeros",   1, OPC_MAKE_TYPE,   NULL) \
    X(ONES,    "ones",    1, OPC_MAKE_TYPE,   NULL) \
    X(FULL,    "full",    2, OPC_FULL,        NULL) \
    X(IOTA,    "iota",    1, OPC_MAKE_TYPE,   NULL) \
    X(COPY,    "copy",    1, OPC_COPY,        NULL) \
    X(CAST,    "cast",    2, OPC_CAST,        NULL) \
    X(WHERE,   "where",   3, OPC_WHERE,       NULL) \
    X(LEN,     "len",     1, OPC_LEN,         NULL)

enum op_kind {
#define X(name, spelling, arity, cls, infix) OP_##name,
    CFX_OPS(X)
#undef X
    OP_COUNT
};

#ifdef __cplusplus
extern "C" {
#endif

/* Tables generated from CFX_OPS, defined once in host/program/ops.c. */
extern const char *const op_spellings[OP_COUNT]; /* "" for ops reached only by syntax */
extern const char *const op_infix[OP_COUNT];     /* NULL where there is none */
extern const int op_arity[OP_COUNT];
extern const int op_class[OP_COUNT];             /* an enum op_class */

/* The op's name in the language (`and`/`or` have only their infix spelling); "?" out of range. */
const char *op_name(int op);

#ifdef __cplusplus
}
#endif

#endif
