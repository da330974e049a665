/* bench_startup.c: what a cfx process costs before it does any work, against Lua's start.
 *
 *   build/profiling/bench_startup [--repeats N] CFX [CFX...]
 *
 * Whole processes, as a user meets them: for each cfx binary given (the build to measure, and
 * another build to compare it with, say), `cfx check` of a one-iteration graph, `cfx run` of
 * it on the cpu executor, `cfx run` with `--backend auto` (which asks whether a GPU is
 * present) and `cfx --version` (which loads nothing: `cfx backends` is the command that loads
 * the CUDA executors to describe them, and older builds have no such command); and
 * `lua5.4 -e ''` as the anchor. Each command is spawned N times (default 31) after 3 warm-up
 * rounds, in rounds that take every command in turn, so a noisy moment of a shared machine
 * falls on all of them alike. Wall time is the host's monotonic clock from posix_spawn to
 * wait4; peak memory is the child's ru_maxrss from wait4. The table gives medians and the
 * ratio to Lua's medians from the same run. Every command must exit 0, and the run must
 * print `s = 1` (worked by hand: one iteration adds i + 1 with i = 0), or nothing is reported.
 *
 * The goal: `cfx check` within 2 ms and 16 MiB on a build with CUDA. Lua is looked
 * for as lua5.4 on PATH (Debian: apt-get install lua5.4); without it the table has no ratios.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

#define MAX_BINARIES 4
#define MAX_COMMANDS (4 * MAX_BINARIES + 1)
#define MAX_ARGS 12
#define MAX_REPEATS 1000
#define WARMUP 3

static const char graph[] =
    "# one iteration: n = 1 -> s = 1\n"
    "graph once(n: i32) -> (s: i32) {\n"
    "  s = 0\n"
    "  for i in range(0, n) {\n"
    "    s = s + i + 1\n"
    "  }\n"
    "}\n";

typedef struct command {
    const char *label;
    const char *binary; /* for the table: which build */
    char *argv[MAX_ARGS];
    double wall_ms[MAX_REPEATS];
    double peak_mib[MAX_REPEATS];
} command;

/* Spawns argv with stdout to `out` (or /dev/null) and stderr to /dev/null, waits, and
 * returns the exit status (-1 when it could not start or did not exit) with its wall time
 * and peak memory. */
static int spawn(char *const argv[], const char *out, double *wall_ms, double *peak_mib)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = 1e3 * bench_wall_s();
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    *wall_ms = 1e3 * bench_wall_s() - t0;
    *peak_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Appends a command: its label, the build it belongs to, then its argv up to a NULL. */
static void add(command *c, int *n, const char *label, const char *binary, ...)
{
    command *k = &c[(*n)++];
    k->label = label;
    k->binary = binary;
    va_list ap;
    va_start(ap, binary);
    for (int i = 0; i < MAX_ARGS - 1; i++)
        if (!(k->argv[i] = va_arg(ap, char *)))
            break;
    va_end(ap);
}

int main(int argc, char **argv)
{
    int repeats = 31, nbin = 0;
    char *bins[MAX_BINARIES];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (argv[i][0] == '-' || nbin == MAX_BINARIES) {
            fprintf(stderr, "usage: bench_startup [--repeats N] CFX [CFX...] (at most %d)\n",
                    MAX_BINARIES);
            return 2;
        } else {
            bins[nbin++] = argv[i];
        }
    }
    if (nbin == 0 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: bench_startup [--repeats N] CFX [CFX...] (N in 1..%d)\n",
                MAX_REPEATS);
        return 2;
    }

    char dir[] = "/tmp/bench_startup.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_startup: mkdtemp");
        return 1;
    }
    char file[64], out[64];
    snprintf(file, sizeof file, "%s/once.cfx", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    FILE *f = fopen(file, "w");
    if (!f || fputs(graph, f) < 0 || fclose(f) != 0) {
        perror("bench_startup: writing the graph");
        return 1;
    }

    static command cmds[MAX_COMMANDS];
    int n = 0;
    for (int b = 0; b < nbin; b++) {
        char *bin = bins[b];
        add(cmds, &n, "check", bin, bin, "check", file, (char *)NULL);
        add(cmds, &n, "run --backend cpu", bin, bin, "run", file, "--in", "n=1", "--backend", "cpu",
            (char *)NULL);
        add(cmds, &n, "run --backend auto", bin, bin, "run", file, "--in", "n=1", "--backend",
            "auto", (char *)NULL);
        add(cmds, &n, "--version", bin, bin, "--version", (char *)NULL);
    }
    add(cmds, &n, "lua5.4 -e ''", "(anchor)", "lua5.4", "-e", "", (char *)NULL);
    int lua = n - 1, have_lua = 1;

    /* every command must work, and the run must give the hand-worked answer */
    int rc = 0;
    for (int i = 0; i < n; i++) {
        double w, p;
        int st = spawn(cmds[i].argv, out, &w, &p);
        if (i == lua && st != 0) {
            have_lua = 0;
            continue;
        }
        if (st != 0) {
            fprintf(stderr, "bench_startup: %s %s exited %d\n", cmds[i].binary, cmds[i].label, st);
            rc = 1;
        }
        if (strncmp(cmds[i].label, "run", 3) == 0) {
            char got[64] = "";
            FILE *g = fopen(out, "r");
            if (g) {
                if (!fgets(got, sizeof got, g))
                    got[0] = '\0';
                fclose(g);
            }
            if (strcmp(got, "s = 1\n") != 0) {
                fprintf(stderr, "bench_startup: %s %s printed [%s], expected s = 1\n",
                        cmds[i].binary, cmds[i].label, got);
                rc = 1;
            }
        }
    }
    unlink(out);
    if (rc != 0) {
        unlink(file);
        rmdir(dir);
        return 1;
    }
    int last = have_lua ? n : n - 1;

    for (int r = -WARMUP; r < repeats; r++) {
        for (int i = 0; i < last; i++) {
            double w = 0, p = 0;
            if (spawn(cmds[i].argv, NULL, &w, &p) != 0) {
                fprintf(stderr, "bench_startup: %s %s failed during the timing\n", cmds[i].binary,
                        cmds[i].label);
                rc = 1;
            }
            if (r >= 0) {
                cmds[i].wall_ms[r] = w;
                cmds[i].peak_mib[r] = p;
            }
        }
    }
    unlink(file);
    rmdir(dir);

    struct utsname u;
    uname(&u);
    char model[128];
    bench_cpu_name(model, sizeof model);
    printf("## Startup: whole processes, medians of %d runs (after %d warm-up rounds)\n\n", repeats,
           WARMUP);
    printf("host: %s %s, %s, %ld cores online\n\n", u.sysname, u.machine, model,
           sysconf(_SC_NPROCESSORS_ONLN));
    double lw = have_lua ? bench_median(cmds[lua].wall_ms, repeats) : 0;
    double lp = have_lua ? bench_median(cmds[lua].peak_mib, repeats) : 0;
    printf("| binary | command | wall ms | min .. max | vs Lua | peak MiB | vs Lua |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < last; i++) {
        double w = bench_median(cmds[i].wall_ms, repeats), p = bench_median(cmds[i].peak_mib, repeats);
        double lo = cmds[i].wall_ms[0], hi = cmds[i].wall_ms[0];
        for (int r = 1; r < repeats; r++) {
            lo = cmds[i].wall_ms[r] < lo ? cmds[i].wall_ms[r] : lo;
            hi = cmds[i].wall_ms[r] > hi ? cmds[i].wall_ms[r] : hi;
        }
        printf("| %s | `%s` | %.2f | %.2f .. %.2f | ", cmds[i].binary, cmds[i].label, w, lo, hi);
        if (have_lua)
            printf("%.1f | %.1f | %.1f |\n", w / lw, p, p / lp);
        else
            printf("- | %.1f | - |\n", p);
    }
    if (!have_lua)
        printf("\nlua5.4 is not on PATH, so there is no anchor "
               "(Debian: apt-get install lua5.4).\n");
    return rc;
}
