/* testutil.h: the few checks every C test uses. A failed check prints its file, line and
 * what was expected, and counts; test_main() exits 1 if any check failed. */
#ifndef CFX_TESTUTIL_H
#define CFX_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

extern int test_failures;
extern int test_checks;

#define CHECK(cond) test_check((cond) != 0, __FILE__, __LINE__, #cond)
#define CHECK_INT(got, want) test_check_int((int64_t)(got), (int64_t)(want), __FILE__, __LINE__, #got)
#define CHECK_STR(got, want) test_check_str((got), (want), __FILE__, __LINE__, #got)
#define CHECK_REAL(got, want, tol) test_check_real((got), (want), (tol), __FILE__, __LINE__, #got)

int test_check(int ok, const char *file, int line, const char *what);
int test_check_int(int64_t got, int64_t want, const char *file, int line, const char *what);
int test_check_str(const char *got, const char *want, const char *file, int line, const char *what);
int test_check_real(double got, double want, double tol, const char *file, int line, const char *what);
/* Prints "N passed, M failed" and returns the exit status. */
int test_finish(const char *name);
/* Reads a whole file; NULL if it cannot. *len gets its size. Caller frees. */
char *test_read_file(const char *path, long *len);
/* Calls fn with every example graph of the source tree (graphs/NAME.cfx) and its text; returns
 * how many it read. */
int test_each_graph(void (*fn)(const char *path, const char *text, long len, void *user), void *user);
/* The inputs of one `# run:` line of a graph file (graphs/README.md): the line's tokens
 * (`NAME=VALUE`, `--seed N`, ...) give each of the n inputs (names[i], types[i]) its value,
 * a literal, a .npy file under the source tree, or `random` (drawn from --seed); an input the
 * line leaves out takes defaults[i] (cfx_input_default's text, filling every element), when
 * defaults is not NULL and it has one; one whose default is None stays NULL (unbound), and a
 * program's hidden input `present(NAME)` (compile.h) is 1 when the line gives NAME, else 0.
 * inputs[i] is allocated here (free() them, also on failure). Returns 0, or -1 with the reason
 * in err. */
struct cfx_type;
int test_run_inputs(char *const *tokens, int ntok, int n, const char *const *names,
                    const struct cfx_type *types, const char *const *defaults, void **inputs, char *err,
                    size_t errlen);
/* The paths of the .cfx files in graphs/, sorted by name, at most cap of them, each malloc'd
 * (free() them). Returns how many, or -1 when the folder cannot be read. */
int test_graph_files(char **paths, int cap);
/* A test's scratch folder, CFX_TEST_WORK_DIR/NAME in the build tree (never the system's
 * temporary folder): whatever a run of the same test left there (one killed at its timeout,
 * which no handler survives) is removed first, then the folder is made empty. Returns 0 with
 * the path in out, or -1 after saying why. test_workdir_remove removes it at the end. */
int test_workdir(const char *name, char *out, size_t len);
void test_workdir_remove(const char *path);
/* 1 when argv holds --stress: the deep sweeps (label stress, CFX_STRESS=1 ctest), not the counts
 * sized for the README's test command. */
int test_stress(int argc, char **argv);
/* Sets *r to a record of the given fields, the rest zero, for hand-built programs. */
struct cfx_record;
void test_record(struct cfx_record *r, int kind, int op, int dtype, int flags, int a, int b, int c,
                 int d, int line, int col);
/* The prints of a run, as test_print records them (a cfx print callback; print_user is a
 * test_prints, zeroed first, its bytes free()d after): each print an int32 record, an int32 byte
 * count, then the value's bytes, in order. */
typedef struct test_prints {
    uint8_t *bytes;
    size_t n, cap;
} test_prints;
struct cfx_prog;
void test_print(void *user, const struct cfx_prog *prog, int32_t record, const void *data);

#endif
