/* check_env.c: the checker's environment (the variables of the graph being checked, interned
 * types, conflicts, the per-path state env_*) and the call graph of the module: its strongly
 * connected components and the size of each graph once its calls are inlined. Statements and
 * graphs are in check.c, expressions in check_expr.c; the state all share is in check_int.h. */
#include "check_int.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* ---- the environment -------------------------------------------------------------------- */
check_note *check_note_of(checker *C, ast_node *n)
{
    if (!n->note) {
        n->note = ast_alloc(C->m->arena, sizeof(check_note));
        if (!n->note) {
            C->oom = 1;
            memset(&C->dummy, 0, sizeof C->dummy);
            return &C->dummy;
        }
    }
    return n->note;
}

/* FNV-1a, for the name and type hash tables. */
static uint32_t hash_bytes(const void *p, size_t n, uint32_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

int check_var_find(checker *C, const char *name)
{
    if (!C->hashcap)
        return -1;
    uint32_t mask = (uint32_t)C->hashcap - 1;
    for (uint32_t h = hash_bytes(name, strlen(name), 2166136261u) & mask;; h = (h + 1) & mask) {
        int32_t v = C->name_hash[h] - 1;
        if (v < 0)
            return -1;
        if (strcmp(C->names[v], name) == 0)
            return v;
    }
}

static void hash_insert(checker *C, int v)
{
    uint32_t mask = (uint32_t)C->hashcap - 1;
    uint32_t h = hash_bytes(C->names[v], strlen(C->names[v]), 2166136261u) & mask;
    while (C->name_hash[h])
        h = (h + 1) & mask;
    C->name_hash[h] = v + 1;
}

int check_var_add(checker *C, const char *name)
{
    int v = check_var_find(C, name);
    if (v >= 0)
        return v;
    if (C->nvars == C->capvars) {
        int cap = C->capvars ? C->capvars * 2 : 16;
        const char **nn = realloc(C->names, (size_t)cap * sizeof *nn);
        if (!nn) {
            C->oom = 1;
            return -1;
        }
        C->names = nn;
        C->capvars = cap;
    }
    if (2 * (C->nvars + 1) > C->hashcap) {
        int cap = C->hashcap ? C->hashcap * 2 : 64;
        int32_t *t = calloc((size_t)cap, sizeof *t);
        if (!t) {
            C->oom = 1;
            return -1;
        }
        free(C->name_hash);
        C->name_hash = t;
        C->hashcap = cap;
        for (int i = 0; i < C->nvars; i++)
            hash_insert(C, i);
    }
    C->names[C->nvars] = name;
    hash_insert(C, C->nvars);
    return C->nvars++;
}

void check_vars_reset(checker *C)
{
    C->nvars = 0;
    if (C->name_hash)
        memset(C->name_hash, 0, (size_t)C->hashcap * sizeof *C->name_hash);
}

static uint32_t type_hash(const cfx_type *t)
{
    uint32_t h = hash_bytes(&t->dtype, sizeof t->dtype, 2166136261u);
    h = hash_bytes(&t->rank, sizeof t->rank, h);
    for (int i = 0; i < t->rank && i < CFX_TYPE_MAX_RANK; i++)
        h = hash_bytes(&t->dims[i], sizeof t->dims[i], h);
    return h;
}

/* The id of type t, interned; 0 (with oom set) when out of memory. */
int32_t check_type_id(checker *C, const cfx_type *t)
{
    if (C->typehashcap) {
        uint32_t mask = (uint32_t)C->typehashcap - 1;
        for (uint32_t h = type_hash(t) & mask;; h = (h + 1) & mask) {
            int32_t id = C->type_hash[h] - 1;
            if (id < 0)
                break;
            if (check_same_type(&C->types[id], t))
                return id;
        }
    }
    if (C->ntypes == C->captypes) {
        int32_t cap = C->captypes ? C->captypes * 2 : 32;
        cfx_type *nt = realloc(C->types, (size_t)cap * sizeof *nt);
        if (!nt) {
            C->oom = 1;
            return 0;
        }
        C->types = nt;
        C->captypes = cap;
    }
    if (2 * (C->ntypes + 1) > C->typehashcap) {
        int32_t cap = C->typehashcap ? C->typehashcap * 2 : 64;
        int32_t *th = calloc((size_t)cap, sizeof *th);
        if (!th) {
            C->oom = 1;
            return 0;
        }
        free(C->type_hash);
        C->type_hash = th;
        C->typehashcap = cap;
        for (int32_t i = 0; i < C->ntypes; i++) {
            uint32_t h = type_hash(&C->types[i]) & (uint32_t)(cap - 1);
            while (th[h])
                h = (h + 1) & (uint32_t)(cap - 1);
            th[h] = i + 1;
        }
    }
    int32_t id = C->ntypes++;
    C->types[id] = *t;
    uint32_t mask = (uint32_t)C->typehashcap - 1, h = type_hash(t) & mask;
    while (C->type_hash[h])
        h = (h + 1) & mask;
    C->type_hash[h] = id + 1;
    return id;
}

int32_t check_add_conflict(checker *C, const conflict *c)
{
    if (C->nconflicts == C->capconflicts) {
        int32_t cap = C->capconflicts ? C->capconflicts * 2 : 16;
        conflict *nc = realloc(C->conflicts, (size_t)cap * sizeof *nc);
        if (!nc) {
            C->oom = 1;
            return -1;
        }
        C->conflicts = nc;
        C->capconflicts = cap;
    }
    C->conflicts[C->nconflicts] = *c;
    return C->nconflicts++;
}

int check_env_new(checker *C, env *e)
{
    e->live = 1;
    e->v = calloc((size_t)(C->nvars ? C->nvars : 1), sizeof(vstate));
    if (!e->v)
        C->oom = 1;
    return e->v ? 0 : -1;
}

int check_env_copy(checker *C, env *dst, const env *src)
{
    if (check_env_new(C, dst) < 0)
        return -1;
    memcpy(dst->v, src->v, (size_t)C->nvars * sizeof(vstate));
    dst->live = src->live;
    return 0;
}

void check_env_free(env *e)
{
    free(e->v);
    e->v = NULL;
}

/* ---- the call graph ------------------------------------------------------------------- */
/* Appends to *edges the graphs that tree n calls (each once: stamp[h] == from marks h seen). */
typedef struct edgelist {
    int *v;
    int n, cap;
} edgelist;

static int push_edge(checker *C, edgelist *e, int v)
{
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        int *nv = realloc(e->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            C->oom = 1;
            return -1;
        }
        e->v = nv;
        e->cap = cap;
    }
    e->v[e->n++] = v;
    return 0;
}

/* Also counts the nodes of tree n into *nodes and lists every call site (a graph called
 * twice is listed twice) in *sites. */
static void collect_calls(checker *C, const ast_node *n, int from, int *stamp, edgelist *edges,
                          edgelist *sites, int64_t *nodes, int depth)
{
    if (!n || depth > 4 * PARSE_MAX_DEPTH || C->oom)
        return;
    (*nodes)++;
    if (n->kind == AST_CALL) {
        int g = check_graph_find(C, n->name);
        if (g >= 0)
            push_edge(C, sites, g);
        if (g >= 0 && stamp[g] != from) {
            stamp[g] = from;
            push_edge(C, edges, g);
        }
    }
    collect_calls(C, n->a, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->b, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->c, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->d, from, stamp, edges, sites, nodes, depth + 1);
    for (int i = 0; i < n->nlist; i++)
        collect_calls(C, n->list[i], from, stamp, edges, sites, nodes, depth + 1);
}

static int cmp_by_scc(const void *x, const void *y)
{
    const int *a = x, *b = y; /* pairs (scc, graph) */
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* size[g] = g's own nodes + the size of every graph it calls, once per call site: an estimate
 * of its program once calls are inlined, so that a file whose calls multiply (f calls g twice,
 * g calls h twice, ...) is rejected before anything is built. Tarjan numbers components
 * callees first, so walking components in order sees every callee before its callers. */
static int inline_sizes(checker *C, const int *site_start, const edgelist *sites)
{
    int n = C->m->ngraphs;
    int *order = malloc(((size_t)n + 1) * 2 * sizeof *order);
    if (!order)
        return -1;
    for (int g = 0; g < n; g++) {
        order[2 * g] = C->scc[g];
        order[2 * g + 1] = g;
    }
    qsort(order, (size_t)n, 2 * sizeof *order, cmp_by_scc);
    const int64_t cap = (int64_t)1 << 40;
    for (int i = 0; i < n; i++) {
        int g = order[2 * i + 1];
        int64_t total = C->size[g];
        for (int k = site_start[g]; k < site_start[g + 1]; k++) {
            int h = sites->v[k];
            if (C->scc[h] != C->scc[g]) /* a recursive call is an error of its own */
                total += C->size[h];
            if (total > cap)
                total = cap;
        }
        C->size[g] = total;
    }
    free(order);
    return 0;
}

/* The call graph's strongly connected components (Tarjan's algorithm, iterative so a long
 * chain of calls cannot exhaust the stack): a call from g to h closes a cycle exactly when g
 * and h lie in one component. Fills C->scc; -1 when out of memory. */
int check_call_sccs(checker *C)
{
    int n = C->m->ngraphs, rc = -1;
    edgelist edges = {0}, sites = {0};
    int *start = calloc((size_t)n + 1, sizeof *start), *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
    int *site_start = calloc((size_t)n + 1, sizeof *site_start);
    C->size = calloc((size_t)n + 1, sizeof *C->size);
    int *index = malloc(((size_t)n + 1) * sizeof *index), *low = malloc(((size_t)n + 1) * sizeof *low);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack), *frame = malloc(((size_t)n + 1) * sizeof *frame);
    int *pos = malloc(((size_t)n + 1) * sizeof *pos);
    uint8_t *on = calloc((size_t)n + 1, 1);
    C->scc = malloc(((size_t)n + 1) * sizeof *C->scc);
    if (!start || !stamp || !index || !low || !stack || !frame || !pos || !on || !C->scc || !site_start ||
        !C->size)
        goto done;
    for (int g = 0; g < n; g++)
        stamp[g] = -1;
    for (int g = 0; g < n; g++) {
        start[g] = edges.n;
        site_start[g] = sites.n;
        collect_calls(C, C->m->graphs[g].body, g, stamp, &edges, &sites, &C->size[g], 0);
    }
    start[n] = edges.n;
    site_start[n] = sites.n;
    if (C->oom)
        goto done;
    for (int g = 0; g < n; g++)
        index[g] = -1;
    int counter = 0, sp = 0, ncomp = 0;
    for (int root = 0; root < n; root++) {
        if (index[root] >= 0)
            continue;
        int fp = 0;
        frame[fp] = root;
        pos[fp++] = start[root];
        index[root] = low[root] = counter++;
        stack[sp++] = root;
        on[root] = 1;
        while (fp > 0) {
            int v = frame[fp - 1];
            if (pos[fp - 1] < start[v + 1]) {
                int w = edges.v[pos[fp - 1]++];
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[sp++] = w;
                    on[w] = 1;
                    frame[fp] = w;
                    pos[fp++] = start[w];
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            fp--;
            if (low[v] == index[v]) {
                int w;
                do {
                    w = stack[--sp];
                    on[w] = 0;
                    C->scc[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
            if (fp > 0 && low[v] < low[frame[fp - 1]])
                low[frame[fp - 1]] = low[v];
        }
    }
    rc = inline_sizes(C, site_start, &sites);
done:
    free(edges.v);
    free(sites.v);
    free(site_start);
    free(start);
    free(stamp);
    free(index);
    free(low);
    free(stack);
    free(frame);
    free(pos);
    free(on);
    return rc;
}
