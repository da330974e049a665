/* testutil.c: checks and reporting shared by the C tests. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfx.h"
#include "host/runtime/npy.h"
#include "host/program/program.h"
#include "host/runtime/value.h"

int test_failures;
int test_checks;

int test_check(int ok, const char *file, int line, const char *what)
{
    test_checks++;
    if (!ok) {
        test_failures++;
        fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    }
    return ok;
}

int test_check_int(int64_t got, int64_t want, const char *file, int line, const char *what)
{
    test_checks++;
    if (got != want) {
        test_failures++;
        fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", file, line, what, (long long)got,
                (long long)want);
        return 0;
    }
    return 1;
}

int test_check_str(const char *got, const char *want, const char *file, int line, const char *what)
{
    test_checks++;
    if (!got || !want || strcmp(got, want) != 0) {
        test_failures++;
        fprintf(stderr, "%s:%d: %s is\n  \"%s\"\nexpected\n  \"%s\"\n", file, line, what,
                got ? got : "(null)", want ? want : "(null)");
        return 0;
    }
    return 1;
}

int test_check_real(double got, double want, double tol, const char *file, int line, const char *what)
{
    test_checks++;
    int ok = (isnan(got) && isnan(want)) || got == want || fabs(got - want) <= tol * fmax(1.0, fabs(want));
    if (!ok) {
        test_failures++;
        fprintf(stderr, "%s:%d: %s is %.17g, expected %.17g (tolerance %g)\n", file, line, what, got,
                want, tol);
    }
    return ok;
}

int test_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_checks - test_failures, test_failures);
    return test_failures ? 1 : 0;
}

char *test_read_file(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

int test_each_graph(void (*fn)(const char *path, const char *text, long len, void *user), void *user)
{
    char list[8192] = "";
    int n = 0;
    FILE *ls = popen("ls " CFX_SOURCE_DIR "/graphs/*.cfx 2>/dev/null", "r");
    if (ls) {
        size_t got = fread(list, 1, sizeof list - 1, ls);
        list[got] = '\0';
        pclose(ls);
    }
    for (char *path = strtok(list, "\n"); path; path = strtok(NULL, "\n")) {
        long len = 0;
        char *text = test_read_file(path, &len);
        if (!text)
            continue;
        fn(path, text, len, user);
        free(text);
        n++;
    }
    return n;
}

void test_print(void *user, const cfx_prog *prog, int32_t record, const void *data)
{
    test_prints *pr = (test_prints *)user;
    size_t bytes = (size_t)slot_bytes(&prog->slots[prog->records[record].a]);
    if (pr->n + bytes + 8 > pr->cap) {
        pr->cap = (pr->cap + bytes + 8) * 2;
        pr->bytes = (uint8_t *)realloc(pr->bytes, pr->cap);
        if (!pr->bytes)
            abort();
    }
    int32_t h[2] = {record, (int32_t)bytes};
    memcpy(pr->bytes + pr->n, h, 8);
    memcpy(pr->bytes + pr->n + 8, data, bytes);
    pr->n += bytes + 8;
}

void test_record(cfx_record *r, int kind, int op, int dtype, int flags, int a, int b, int c, int d,
                 int line, int col)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->op = (uint8_t)op;
    r->dtype = (uint8_t)dtype;
    r->flags = (uint8_t)flags;
    r->a = a;
    r->b = b;
    r->c = c;
    r->d = d;
    r->line = line;
    r->col = col;
}

int test_run_inputs(char *const *tokens, int ntok, int n, const char *const *names,
                    const cfx_type *types, const char *const *defaults, void **inputs, char *err,
                    size_t errlen)
{
    uint64_t rng = 0;
    for (int i = 0; i + 1 < ntok; i++)
        if (strcmp(tokens[i], "--seed") == 0)
            rng = strtoull(tokens[i + 1], NULL, 10);
    for (int i = 0; i < n; i++)
        inputs[i] = NULL;
    for (int i = 0; i < n; i++) {
        const cfx_type *t = &types[i];
        size_t bytes = (size_t)(cfx_type_count(t) * cfx_dtype_size(t->dtype));
        size_t len = strlen(names[i]);
        const char *value = NULL;
        for (int k = 0; k < ntok; k++)
            if (strncmp(tokens[k], names[i], len) == 0 && tokens[k][len] == '=')
                value = tokens[k] + len + 1;
        if (!value && defaults && defaults[i] && strcmp(defaults[i], "None") == 0)
            continue; /* left out: None, unbound (NULL) */
        inputs[i] = calloc(1, bytes ? bytes : 1);
        if (!inputs[i]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (strncmp(names[i], "present(", 8) == 0) {
            /* a program's hidden input (compile.h): 1 when the line gives the parameter it names */
            size_t plen = strlen(names[i]) - 9;
            int given = 0;
            for (int k = 0; k < ntok; k++)
                given |= strncmp(tokens[k], names[i] + 8, plen) == 0 && tokens[k][plen] == '=';
            *(int32_t *)inputs[i] = given;
            continue;
        }
        if (!value && defaults && defaults[i]) {
            /* its default: one element, repeated */
            cfx_type one = *t;
            one.rank = 0;
            char why[256] = "";
            int size = cfx_dtype_size(t->dtype);
            if (value_parse(defaults[i], &one, inputs[i], why, sizeof why) != 0) {
                snprintf(err, errlen, "the default of input '%s': %s", names[i], why);
                return -1;
            }
            for (int64_t e = 1; e < cfx_type_count(t); e++)
                memcpy((char *)inputs[i] + e * size, inputs[i], (size_t)size);
            continue;
        }
        if (!value) {
            snprintf(err, errlen, "no value for input '%s'", names[i]);
            return -1;
        }
        if (strcmp(value, "random") == 0) {
            value_random(t, &rng, inputs[i]);
        } else if (strlen(value) > 4 && strcmp(value + strlen(value) - 4, ".npy") == 0) {
            char full[1024], why[256] = "";
            if (value[0] == '/') /* an absolute path as it is, else from the source tree */
                snprintf(full, sizeof full, "%s", value);
            else
                snprintf(full, sizeof full, "%s/%s", CFX_SOURCE_DIR, value);
            if (npy_read_file(full, t, inputs[i], why, sizeof why) != 0) {
                snprintf(err, errlen, "%s", why);
                return -1;
            }
        } else {
            char why[256] = "";
            if (value_parse(value, t, inputs[i], why, sizeof why) != 0) {
                snprintf(err, errlen, "input '%s': %s", names[i], why);
                return -1;
            }
        }
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int test_graph_files(char **paths, int cap)
{
    char dir[1024];
    int n = 0;
    snprintf(dir, sizeof dir, "%s/graphs", CFX_SOURCE_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < cap;) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".cfx") != 0)
            continue;
        paths[n] = malloc(strlen(dir) + len + 2);
        if (!paths[n])
            break;
        sprintf(paths[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof paths[0], by_name);
    return n;
}

#ifndef CFX_TEST_WORK_DIR
#define CFX_TEST_WORK_DIR "work"
#endif

static void remove_tree(const char *path)
{
    char cmd[1200];
    if (strchr(path, '\'') || strlen(path) > 1000)
        return; /* never a path the quoting below would get wrong */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
}

int test_workdir(const char *name, char *out, size_t len)
{
    int n = snprintf(out, len, "%s/%s", CFX_TEST_WORK_DIR, name);
    if (n < 0 || (size_t)n >= len || strchr(out, '\'')) {
        fprintf(stderr, "test_workdir: bad path %s/%s\n", CFX_TEST_WORK_DIR, name);
        return -1;
    }
    remove_tree(out);
    if (mkdir(CFX_TEST_WORK_DIR, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "test_workdir: mkdir %s: %s\n", CFX_TEST_WORK_DIR, strerror(errno));
        return -1;
    }
    if (mkdir(out, 0777) != 0) {
        fprintf(stderr, "test_workdir: mkdir %s: %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
}

void test_workdir_remove(const char *path) { remove_tree(path); }

int test_stress(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--stress") == 0)
            return 1;
    return 0;
}
