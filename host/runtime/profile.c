/* profile.c: a run's flat profile, from the per-record counts and times an executor filled
 * (exec_profile), as rows by source line, by record kind and per loop, and as text.
 *
 * Executors only count and stamp; everything that knows about lines and loops is here, so a
 * backend that learns to fill exec_profile (from a device timeline, say) gets the same rows.
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "host/util/strbuf.h"

/* A loop as the lowering lays it out (lower.c): `head: test; JUMP_FALSE exit; TICK; body;
 * [step;] JUMP head`, so one back edge, a JUMP to an earlier record, closes [head, end], and
 * the first TICK at or after the head is its iteration count (a nested loop's TICK comes after
 * its own head, which is after this one's). The TICK carries the loop statement's position. */
typedef struct loop_span {
    int32_t head, end, tick;
} loop_span;

static int find_loops(const cfx_prog *prog, loop_span *loops)
{
    int n = 0;
    for (int32_t j = 0; j < prog->nrecords; j++) {
        const cfx_record *r = &prog->records[j];
        if (r->kind != REC_JUMP || r->a > j)
            continue;
        int32_t tick = -1;
        for (int32_t k = r->a; k <= j && tick < 0; k++)
            if (prog->records[k].kind == REC_TICK)
                tick = k;
        if (tick < 0)
            continue;
        int same = -1;
        for (int i = 0; i < n && same < 0; i++)
            if (loops[i].head == r->a)
                same = i;
        if (same >= 0)
            loops[same].end = j; /* a later back edge of the same loop */
        else
            loops[n++] = (loop_span){r->a, j, tick};
    }
    return n;
}

static int by_line(const void *a, const void *b)
{
    const cfx_profile_row *x = a, *y = b;
    return (x->line > y->line) - (x->line < y->line);
}

static int by_time(const void *a, const void *b)
{
    const cfx_profile_row *x = a, *y = b;
    return (x->total_us < y->total_us) - (x->total_us > y->total_us);
}

static void finish_row(cfx_profile_row *row, double run_us)
{
    row->mean_us = row->count > 0 ? row->total_us / (double)row->count : 0;
    row->share = run_us > 0 ? row->total_us / run_us : 0;
}

/* Every row, malloc'd, into *out; returns the count or -1 when out of memory. */
static int all_rows(const cfx_prog *prog, const exec_profile *p, cfx_profile_row **out)
{
    int32_t n = prog->nrecords;
    /* at most one row per record for lines, one per kind, and a loop per back edge */
    cfx_profile_row *rows = calloc((size_t)(2 * n + REC_COUNT + 1), sizeof *rows);
    loop_span *loops = malloc((size_t)(n + 1) * sizeof *loops);
    int32_t *line_row = NULL;
    if (!rows || !loops) {
        free(rows);
        free(loops);
        return -1;
    }
    double run_us = (double)p->run_ns / 1e3;
    int nrows = 0;

    /* by line: records executed at least once (or timed: the compiled kernel's timeline gives a
     * barrier's wait to its record), grouped by their statement's line */
    int32_t max_line = 0;
    for (int32_t i = 0; i < n; i++)
        if (prog->records[i].line > max_line)
            max_line = prog->records[i].line;
    line_row = malloc((size_t)(max_line + 1) * sizeof *line_row);
    if (!line_row) {
        free(rows);
        free(loops);
        return -1;
    }
    for (int32_t l = 0; l <= max_line; l++)
        line_row[l] = -1;
    int first = nrows;
    for (int32_t i = 0; i < n; i++) {
        if (p->count[i] == 0 && p->ns[i] == 0)
            continue;
        int32_t l = prog->records[i].line > 0 ? prog->records[i].line : 0;
        if (line_row[l] < 0) {
            line_row[l] = nrows;
            rows[nrows++] = (cfx_profile_row){CFX_PROFILE_LINE, l, "", 0, 0, 0, 0};
        }
        rows[line_row[l]].count += p->count[i];
        rows[line_row[l]].total_us += (double)p->ns[i] / 1e3;
    }
    qsort(rows + first, (size_t)(nrows - first), sizeof *rows, by_line);

    /* by kind */
    first = nrows;
    for (int k = 0; k < REC_COUNT; k++) {
        cfx_profile_row row = {CFX_PROFILE_KIND, 0, rec_names[k], 0, 0, 0, 0};
        for (int32_t i = 0; i < n; i++)
            if (prog->records[i].kind == k) {
                row.count += p->count[i];
                row.total_us += (double)p->ns[i] / 1e3;
            }
        if (row.count > 0 || row.total_us > 0)
            rows[nrows++] = row;
    }
    qsort(rows + first, (size_t)(nrows - first), sizeof *rows, by_time);

    /* per loop: the whole span, and its iterations from its TICK */
    first = nrows;
    int nloops = find_loops(prog, loops);
    for (int i = 0; i < nloops; i++) {
        cfx_profile_row row = {CFX_PROFILE_LOOP, prog->records[loops[i].tick].line, "",
                               p->count[loops[i].tick], 0, 0, 0};
        for (int32_t k = loops[i].head; k <= loops[i].end; k++)
            row.total_us += (double)p->ns[k] / 1e3;
        if (row.count > 0 || row.total_us > 0)
            rows[nrows++] = row;
    }
    qsort(rows + first, (size_t)(nrows - first), sizeof *rows, by_line);

    for (int i = 0; i < nrows; i++)
        finish_row(&rows[i], run_us);
    free(line_row);
    free(loops);
    *out = rows;
    return nrows;
}

int exec_profile_rows(const cfx_prog *prog, const exec_profile *p, cfx_profile_row *rows, int max)
{
    cfx_profile_row *all;
    int n = all_rows(prog, p, &all);
    if (n < 0)
        return -1;
    if (rows && max > 0)
        memcpy(rows, all, (size_t)(n < max ? n : max) * sizeof *rows);
    free(all);
    return n;
}

char *exec_profile_text(const cfx_prog *prog, const exec_profile *p, const char *executor)
{
    cfx_profile_row *rows;
    int n = all_rows(prog, p, &rows);
    if (n < 0)
        return NULL;
    int64_t records = 0;
    for (int32_t i = 0; i < prog->nrecords; i++)
        records += p->count[i];
    strbuf sb = {0};
    sb_printf(&sb, "profile of graph %s (%s) on %s: %lld records in %.3f us\n", prog->name,
              prog->file, executor, (long long)records, (double)p->run_ns / 1e3);
    static const char *const titles[] = {"by source line:\n", "by record kind:\n",
                                         "loops (nested loops inside their time):\n"};
    for (int by = CFX_PROFILE_LINE; by <= CFX_PROFILE_LOOP; by++) {
        int any = 0;
        for (int i = 0; i < n; i++) {
            const cfx_profile_row *r = &rows[i];
            if ((int)r->by != by)
                continue;
            if (!any++ && by == CFX_PROFILE_KIND)
                sb_printf(&sb, "%s  %-12s %9s %12s %13s %7s\n", titles[by], "kind", "count",
                          "total us", "mean us", "share");
            else if (any == 1)
                sb_printf(&sb, "%s  %4s %12s %12s %13s %7s\n", titles[by], by == CFX_PROFILE_LINE ? "line" : "loop",
                          by == CFX_PROFILE_LINE ? "count" : "iterations", "total us",
                          by == CFX_PROFILE_LINE ? "mean us" : "us/iteration", "share");
            if (by == CFX_PROFILE_KIND)
                sb_printf(&sb, "  %-12s %9lld %12.3f %13.4f %6.1f%%\n", r->kind, (long long)r->count,
                          r->total_us, r->mean_us, 100 * r->share);
            else
                sb_printf(&sb, "  %4d %12lld %12.3f %13.4f %6.1f%%\n", r->line, (long long)r->count,
                          r->total_us, r->mean_us, 100 * r->share);
        }
    }
    free(rows);
    if (sb.oom) {
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb);
}
