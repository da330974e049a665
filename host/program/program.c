/* program.c: building a program (for the lowering) and laying out its arena; the names
 * of the record kinds and their fields; freeing a program.
 *
 * The builder checks only limits and shapes; everything an executor trusts is checked
 * again by prog_validate (validate.c), and `cfx dump` is in dump.c.
 */
#include "program.h"
#include "kernels/cfxlimits.h"
#include "host/util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const rec_names[REC_COUNT] = {
#define X(name, fields, family, domain, access, comment) #name,
    CFX_RECORDS(X)
#undef X
};

const char *const rec_fields[REC_COUNT] = {
#define X(name, fields, family, domain, access, comment) fields,
    CFX_RECORDS(X)
#undef X
};

/* the builder's limits (PROG_MAX_RECORDS ...) are in kernels/cfxlimits.h, with every other */
_Static_assert(CFX_TYPE_MAX_RANK == CFX_MAX_RANK, "cfx.h's rank limit is cfxlimits.h's");

/* ==== the builder ============================================================================ */
/* An open-addressing set of int32 items (slot indices or string offsets), so that interning
 * stays linear in the size of the program however many literals and names it has. */
typedef struct hash_set {
    int32_t *items; /* item + 1; 0 is an empty cell */
    uint64_t *hashes;
    int64_t cap;    /* a power of two, or 0 */
    int64_t n;
} hash_set;

/* Returns the cell where an item with hash h equal to `key` is, or the empty cell where it
 * would go; `eq` compares a stored item with the key. */
static int64_t hash_find(const hash_set *t, uint64_t h, const void *key,
                         int (*eq)(const void *ctx, int32_t item, const void *key), const void *ctx)
{
    int64_t mask = t->cap - 1, i = (int64_t)(h & (uint64_t)mask);
    while (t->items[i] != 0) {
        if (t->hashes[i] == h && eq(ctx, t->items[i] - 1, key))
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Makes room for one more item (load at most one half). 0, or -1 out of memory. */
static int hash_reserve(hash_set *t)
{
    if ((t->n + 1) * 2 <= t->cap)
        return 0;
    int64_t cap = t->cap ? t->cap * 2 : 64;
    int32_t *items = calloc((size_t)cap, sizeof *items);
    uint64_t *hashes = calloc((size_t)cap, sizeof *hashes);
    if (!items || !hashes) {
        free(items);
        free(hashes);
        return -1;
    }
    for (int64_t i = 0; i < t->cap; i++) {
        if (t->items[i] == 0)
            continue;
        int64_t j = (int64_t)(t->hashes[i] & (uint64_t)(cap - 1));
        while (items[j] != 0)
            j = (j + 1) & (cap - 1);
        items[j] = t->items[i];
        hashes[j] = t->hashes[i];
    }
    free(t->items);
    free(t->hashes);
    t->items = items;
    t->hashes = hashes;
    t->cap = cap;
    return 0;
}

static void hash_free(hash_set *t)
{
    free(t->items);
    free(t->hashes);
}

struct prog_builder {
    char *file, *name;
    cfx_record *records;
    int32_t nrecords, cap_records;
    cfx_slot *slots;
    int32_t nslots, cap_slots;
    int32_t *table;
    int32_t ntable, cap_table;
    char *strings;
    int32_t nstrings, cap_strings;
    uint8_t *consts;
    int64_t const_bytes, cap_consts;
    int32_t *inputs, ninputs, cap_inputs;
    int32_t *results, nresults, cap_results;
    int32_t *kernels, nkernels, cap_kernels;
    hash_set string_set; /* string offsets, for interning */
    hash_set const_set;  /* const slot indices, for sharing equal constants */
    int failed;       /* a limit was exceeded or memory ran out; prog_finish says so */
    char why[160];
};

static char *copy_string(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s ? s : "", n);
    return c;
}

static void fail_builder(prog_builder *b, const char *why)
{
    if (!b->failed)
        snprintf(b->why, sizeof b->why, "%s", why);
    b->failed = 1;
}

/* Makes room for `need` elements of `size` bytes in *arr (capacity *cap, at most `limit`). */
static int grow(prog_builder *b, void **arr, int64_t *cap, int64_t need, size_t size, int64_t limit,
                const char *what)
{
    if (need <= *cap)
        return 0;
    if (need > limit) {
        char why[160];
        snprintf(why, sizeof why, "the program has too many %s (the limit is %lld)", what,
                 (long long)limit);
        fail_builder(b, why);
        return -1;
    }
    int64_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > limit)
        c = limit;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p) {
        fail_builder(b, "out of memory");
        return -1;
    }
    *arr = p;
    *cap = c;
    return 0;
}

/* The same for int32 capacities. */
static int grow32(prog_builder *b, void **arr, int32_t *cap, int64_t need, size_t size, int64_t limit,
                  const char *what)
{
    int64_t c = *cap;
    int rc = grow(b, arr, &c, need, size, limit, what);
    *cap = (int32_t)c;
    return rc;
}

prog_builder *prog_begin(const char *file, const char *graph_name)
{
    prog_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->file = copy_string(file);
    b->name = copy_string(graph_name);
    if (!b->file || !b->name) {
        prog_abandon(b);
        return NULL;
    }
    return b;
}

int32_t prog_emit(prog_builder *b, cfx_record r)
{
    if (b->failed ||
        grow32(b, (void **)&b->records, &b->cap_records, (int64_t)b->nrecords + 1, sizeof r,
               PROG_MAX_RECORDS, "records"))
        return -1;
    b->records[b->nrecords] = r;
    return b->nrecords++;
}

cfx_record *prog_record(prog_builder *b, int32_t index)
{
    if (index < 0 || index >= b->nrecords)
        return NULL;
    return &b->records[index];
}

int32_t prog_here(const prog_builder *b)
{
    return b->nrecords;
}

/* Fills the dtype, rank, dims and count of a slot; -1 for a shape no program may have. */
static int set_shape(prog_builder *b, cfx_slot *s, cfx_dtype dt, int rank, const int32_t *dims)
{
    memset(s, 0, sizeof *s);
    if ((int)dt < 0 || dt > CFX_BOOL || rank < 0 || rank > CFX_MAX_RANK || (rank > 0 && !dims)) {
        fail_builder(b, "a slot has a bad dtype or rank");
        return -1;
    }
    int64_t count = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > CFX_MAX_ELEMENTS || count * dims[i] > CFX_MAX_ELEMENTS) {
            char why[160];
            snprintf(why, sizeof why, "a tensor has a dimension below 1 or more than %lld elements",
                     (long long)CFX_MAX_ELEMENTS);
            fail_builder(b, why);
            return -1;
        }
        count *= dims[i];
        s->dims[i] = dims[i];
    }
    s->dtype = (uint8_t)dt;
    s->rank = (uint8_t)rank;
    s->count = count;
    s->name = -1;
    return 0;
}

static int32_t add_slot(prog_builder *b, const cfx_slot *s)
{
    if (grow32(b, (void **)&b->slots, &b->cap_slots, (int64_t)b->nslots + 1, sizeof *s, PROG_MAX_SLOTS,
               "slots"))
        return -1;
    b->slots[b->nslots] = *s;
    return b->nslots++;
}

/* Appends `bytes` bytes (NULL: zeros) to the const image at the next aligned offset. */
static int64_t add_const_bytes(prog_builder *b, const void *data, int64_t bytes)
{
    int64_t at = (b->const_bytes + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
    if (grow(b, (void **)&b->consts, &b->cap_consts, at + bytes, 1, CFX_MAX_ARENA, "constant bytes"))
        return -1;
    memset(b->consts + b->const_bytes, 0, (size_t)(at - b->const_bytes));
    if (data)
        memcpy(b->consts + at, data, (size_t)bytes);
    else
        memset(b->consts + at, 0, (size_t)bytes);
    b->const_bytes = at + bytes;
    return at;
}

int32_t prog_slot(prog_builder *b, cfx_dtype dt, int rank, const int32_t *dims, enum slot_kind kind,
                  const char *name)
{
    cfx_slot s;
    if (b->failed || set_shape(b, &s, dt, rank, dims))
        return -1;
    if ((int)kind < SLOT_TEMP || kind > SLOT_RESULT) {
        fail_builder(b, "a slot has a bad kind");
        return -1;
    }
    s.kind = (uint8_t)kind;
    if (name && (s.name = prog_string(b, name)) < 0)
        return -1;
    s.offset = -1; /* placed by prog_finish */
    if (kind == SLOT_CONST && (s.offset = add_const_bytes(b, NULL, slot_bytes(&s))) < 0)
        return -1;
    return add_slot(b, &s);
}

/* A constant being looked up: its shape in a slot, and its bytes. */
typedef struct const_key {
    const cfx_slot *slot;
    const void *data;
} const_key;

static int const_eq(const void *ctx, int32_t item, const void *key)
{
    const prog_builder *b = ctx;
    const const_key *k = key;
    const cfx_slot *o = &b->slots[item];
    return o->dtype == k->slot->dtype && o->rank == k->slot->rank &&
           memcmp(o->dims, k->slot->dims, sizeof o->dims) == 0 &&
           memcmp(b->consts + o->offset, k->data, (size_t)slot_bytes(o)) == 0;
}

const void *prog_const_value(const prog_builder *b, int32_t slot)
{
    if (b->failed || slot < 0 || slot >= b->nslots || b->slots[slot].kind != SLOT_CONST || b->const_set.cap == 0)
        return NULL;
    const cfx_slot *s = &b->slots[slot];
    const void *data = b->consts + s->offset;
    uint64_t h = hash_bytes(hash_bytes(HASH_SEED, &s->dtype, 2), s->dims, sizeof s->dims);
    h = hash_bytes(h, data, (size_t)slot_bytes(s));
    const_key key = {s, data};
    int64_t cell = hash_find(&b->const_set, h, &key, const_eq, b);
    return b->const_set.items[cell] == slot + 1 ? data : NULL;
}

static int string_eq(const void *ctx, int32_t item, const void *key)
{
    const prog_builder *b = ctx;
    return strcmp(b->strings + item, (const char *)key) == 0;
}

/* Constants with the same type and bytes share one slot: a literal used in a loop body
 * costs one slot however often it appears. */
int32_t prog_const(prog_builder *b, cfx_dtype dt, int rank, const int32_t *dims, const void *data)
{
    cfx_slot s;
    if (b->failed || set_shape(b, &s, dt, rank, dims))
        return -1;
    if (!data) {
        fail_builder(b, "a constant has no data");
        return -1;
    }
    s.kind = SLOT_CONST;
    int64_t bytes = slot_bytes(&s);
    if (hash_reserve(&b->const_set)) {
        fail_builder(b, "out of memory");
        return -1;
    }
    uint64_t h = hash_bytes(hash_bytes(HASH_SEED, &s.dtype, 2), s.dims, sizeof s.dims);
    h = hash_bytes(h, data, (size_t)bytes);
    const_key key = {&s, data};
    int64_t cell = hash_find(&b->const_set, h, &key, const_eq, b);
    if (b->const_set.items[cell] != 0)
        return b->const_set.items[cell] - 1;
    if ((s.offset = add_const_bytes(b, data, bytes)) < 0)
        return -1;
    int32_t at = add_slot(b, &s);
    if (at >= 0) {
        b->const_set.items[cell] = at + 1;
        b->const_set.hashes[cell] = h;
        b->const_set.n++;
    }
    return at;
}

int32_t prog_string(prog_builder *b, const char *s)
{
    if (b->failed || !s)
        return -1;
    if (hash_reserve(&b->string_set)) {
        fail_builder(b, "out of memory");
        return -1;
    }
    size_t n = strlen(s) + 1;
    uint64_t h = hash_bytes(HASH_SEED, s, n);
    int64_t cell = hash_find(&b->string_set, h, s, string_eq, b);
    if (b->string_set.items[cell] != 0)
        return b->string_set.items[cell] - 1;
    if (grow32(b, (void **)&b->strings, &b->cap_strings, (int64_t)b->nstrings + (int64_t)n, 1,
               PROG_MAX_STRINGS, "string bytes"))
        return -1;
    memcpy(b->strings + b->nstrings, s, n);
    int32_t at = b->nstrings;
    b->nstrings += (int32_t)n;
    b->string_set.items[cell] = at + 1;
    b->string_set.hashes[cell] = h;
    b->string_set.n++;
    return at;
}

int32_t prog_table(prog_builder *b, const int32_t *v, int32_t n)
{
    if (b->failed || n < 0 ||
        grow32(b, (void **)&b->table, &b->cap_table, (int64_t)b->ntable + n, sizeof *v, PROG_MAX_TABLE,
               "table entries"))
        return -1;
    for (int32_t i = 0; i < n; i++)
        b->table[b->ntable + i] = v ? v[i] : 0;
    int32_t at = b->ntable;
    b->ntable += n;
    return at;
}

int32_t *prog_table_at(prog_builder *b, int32_t offset)
{
    if (offset < 0 || offset >= b->ntable)
        return NULL;
    return &b->table[offset];
}

int32_t prog_kernel(prog_builder *b, const char *name)
{
    int32_t str = prog_string(b, name);
    if (str < 0)
        return -1;
    for (int32_t i = 0; i < b->nkernels; i++)
        if (b->kernels[i] == str)
            return i;
    if (grow32(b, (void **)&b->kernels, &b->cap_kernels, (int64_t)b->nkernels + 1, sizeof(int32_t),
               PROG_MAX_SLOTS, "kernels"))
        return -1;
    b->kernels[b->nkernels] = str;
    return b->nkernels++;
}

static void add_index(prog_builder *b, int32_t **arr, int32_t *n, int32_t *cap, int32_t slot)
{
    if (b->failed ||
        grow32(b, (void **)arr, cap, (int64_t)*n + 1, sizeof(int32_t), PROG_MAX_SLOTS, "parameters"))
        return;
    (*arr)[(*n)++] = slot;
}

void prog_add_input(prog_builder *b, int32_t slot)
{
    add_index(b, &b->inputs, &b->ninputs, &b->cap_inputs, slot);
}

void prog_add_result(prog_builder *b, int32_t slot)
{
    add_index(b, &b->results, &b->nresults, &b->cap_results, slot);
}

void prog_abandon(prog_builder *b)
{
    if (!b)
        return;
    free(b->file);
    free(b->name);
    free(b->records);
    free(b->slots);
    free(b->table);
    free(b->strings);
    free(b->consts);
    free(b->inputs);
    free(b->results);
    free(b->kernels);
    hash_free(&b->string_set);
    hash_free(&b->const_set);
    free(b);
}

/* Constants already sit in the const image; every other slot goes after it, in slot order,
 * each at an aligned offset. */
cfx_prog *prog_finish(prog_builder *b, char *err, size_t errlen)
{
    cfx_prog *p = NULL;
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (b->failed) {
        snprintf(err, errlen, "%s", b->why);
        goto fail;
    }
    int64_t const_bytes = (b->const_bytes + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
    int64_t at = const_bytes;
    for (int32_t i = 0; i < b->nslots; i++) {
        cfx_slot *s = &b->slots[i];
        if (s->kind == SLOT_CONST)
            continue;
        s->offset = at;
        at += (slot_bytes(s) + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
        if (at > CFX_MAX_ARENA) {
            snprintf(err, errlen, "the graph needs more than %lld bytes of memory",
                     (long long)CFX_MAX_ARENA);
            goto fail;
        }
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* hand the arrays over; the builder keeps nothing */
    p->name = b->name;
    p->file = b->file;
    p->records = b->records;
    p->nrecords = b->nrecords;
    p->slots = b->slots;
    p->nslots = b->nslots;
    p->table = b->table;
    p->ntable = b->ntable;
    p->strings = b->strings;
    p->nstrings = b->nstrings;
    p->consts = b->consts;
    p->const_bytes = const_bytes;
    p->arena_bytes = at;
    p->inputs = b->inputs;
    p->ninputs = b->ninputs;
    p->results = b->results;
    p->nresults = b->nresults;
    p->kernels = b->kernels;
    p->nkernels = b->nkernels;
    hash_free(&b->string_set); /* the sets are only for building */
    hash_free(&b->const_set);
    if (const_bytes > b->const_bytes) { /* pad the image to its aligned size */
        uint8_t *c = realloc(p->consts, (size_t)const_bytes);
        if (!c) {
            snprintf(err, errlen, "out of memory");
            p->consts = b->consts;
            memset(b, 0, sizeof *b); /* the arrays now belong to p */
            free(b);
            prog_free(p);
            return NULL;
        }
        memset(c + b->const_bytes, 0, (size_t)(const_bytes - b->const_bytes));
        p->consts = c;
    }
    free(b);
    return p;
fail:
    prog_abandon(b);
    return NULL;
}

void prog_free(cfx_prog *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->file);
    free(p->records);
    free(p->slots);
    free(p->table);
    free(p->strings);
    free(p->consts);
    free(p->inputs);
    free(p->results);
    free(p->kernels);
    free(p->kernel_form);
    free(p->kernel_source);
    free(p);
}

int prog_set_kernel_source(cfx_prog *p, int32_t k, int form, const char *source, char *err, size_t errlen)
{
    size_t n = strlen(source) + 1;
    if (k < 0 || k >= p->nkernels || (form != KERNEL_ELEMENTS && form != KERNEL_WHOLE)) {
        snprintf(err, errlen, "kernel %d: bad kernel or form", (int)k);
        return -1;
    }
    if ((int64_t)p->nstrings + (int64_t)n > INT32_MAX) {
        snprintf(err, errlen, "kernel %d: its source does not fit the program's strings", (int)k);
        return -1;
    }
    if (!p->kernel_form) {
        p->kernel_form = calloc((size_t)p->nkernels, 1);
        p->kernel_source = malloc(sizeof(int32_t) * (size_t)p->nkernels);
        if (!p->kernel_form || !p->kernel_source) {
            free(p->kernel_form);
            free(p->kernel_source);
            p->kernel_form = NULL;
            p->kernel_source = NULL;
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (int32_t i = 0; i < p->nkernels; i++)
            p->kernel_source[i] = -1;
    }
    char *grown = realloc(p->strings, (size_t)p->nstrings + n);
    if (!grown) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(grown + p->nstrings, source, n);
    p->strings = grown;
    p->kernel_source[k] = p->nstrings;
    p->kernel_form[k] = (uint8_t)form;
    p->nstrings += (int32_t)n;
    return 0;
}
