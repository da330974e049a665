/* testutil.c: checks and reporting shared by the C tests. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

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
