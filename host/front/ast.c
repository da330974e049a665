/* ast.c: the arena that holds every node and string of a parsed module.
 *
 * A module is built once and freed at once, so nodes are carved from large chunks and
 * never freed one by one: the parser needs no cleanup on its error paths. */
#include "ast.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)64 * 1024)

/* Every allocation is a whole number of ALIGN bytes, so all are aligned for what the tree and
 * the checker keep (pointers, int64_t, double); not max_align_t's 16, which would pad every
 * node and note. */
#define ALIGN ((size_t)8)
_Static_assert(_Alignof(ast_node) <= ALIGN && _Alignof(cfx_type) <= ALIGN && _Alignof(double) <= ALIGN &&
                   _Alignof(int64_t) <= ALIGN && _Alignof(void *) <= ALIGN,
               "the arena's alignment covers what it holds");

typedef struct chunk {
    struct chunk *next;
    size_t cap;  /* bytes in data */
    size_t used; /* bytes handed out */
    uint64_t data[];
} chunk;

struct ast_arena {
    chunk *head; /* the chunk allocations come from; older chunks follow */
};

ast_arena *ast_arena_new(void) { return calloc(1, sizeof(ast_arena)); }

static chunk *new_chunk(size_t cap)
{
    chunk *c = malloc(sizeof(chunk) + cap);
    if (!c)
        return NULL;
    c->next = NULL;
    c->cap = cap;
    c->used = 0;
    return c;
}

void *ast_alloc(ast_arena *a, size_t bytes)
{
    if (!a || bytes > SIZE_MAX / 4)
        return NULL;
    size_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0)
        size = ALIGN;
    chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        if (size > CHUNK_BYTES / 4) {
            /* a big block gets a chunk of its own behind the current one, so the space
             * left in the current chunk is not wasted */
            chunk *big = new_chunk(size);
            if (!big)
                return NULL;
            if (c) {
                big->next = c->next;
                c->next = big;
            } else {
                a->head = big;
            }
            big->used = size;
            memset(big->data, 0, size);
            return big->data;
        }
        c = new_chunk(CHUNK_BYTES);
        if (!c)
            return NULL;
        c->next = a->head;
        a->head = c;
    }
    unsigned char *p = (unsigned char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *ast_strdup(ast_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = ast_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void ast_arena_free(ast_arena *a)
{
    if (!a)
        return;
    chunk *c = a->head;
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

void ast_module_free(ast_module *m)
{
    /* the module itself lives in its arena: read the arena pointer before freeing it */
    if (m)
        ast_arena_free(m->arena);
}

/* ---- queries of the tree ------------------------------------------------------------------ */

int ast_each_assigned(const ast_node *n, int (*fn)(const char *name, void *arg), void *arg)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case AST_ASSIGN:
    case AST_ERROR:
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *t = n->list[i];
            if (t->kind == AST_INDEX)
                t = t->a;
            if (t && t->kind == AST_NAME) {
                int r = fn(t->name, arg);
                if (r)
                    return r;
            }
        }
        return 0;
    case AST_FOR_RANGE:
    case AST_FOR_EACH: {
        int r = fn(n->name, arg);
        for (int i = 1; !r && i < n->nlist; i++)
            r = fn(n->list[i]->name, arg);
        return r ? r : ast_each_assigned(n->d, fn, arg);
    }
    case AST_IF:
    case AST_SWITCH:
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++) {
            int r = ast_each_assigned(n->list[i], fn, arg);
            if (r)
                return r;
        }
        return 0;
    case AST_ARM:
    case AST_CASE:
    case AST_WHILE:
        return ast_each_assigned(n->b, fn, arg);
    default:
        return 0;
    }
}

static int is_name(const char *name, void *arg)
{
    return strcmp(name, (const char *)arg) == 0;
}

int ast_assigns(const ast_node *n, const char *name)
{
    return ast_each_assigned(n, is_name, (void *)name);
}

int ast_mutates_list(const ast_node *n, const char *name)
{
    if (!n)
        return 0;
    if (n->kind == AST_ASSIGN)
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *t = n->list[i]->kind == AST_INDEX ? n->list[i]->a : n->list[i];
            if (t->kind == AST_NAME && strcmp(t->name, name) == 0)
                return 1;
        }
    if ((n->kind == AST_FOR_RANGE || n->kind == AST_FOR_EACH) && ast_each_assigned(n, is_name, (void *)name))
        return 1;
    if (n->kind == AST_CALL && (n->flags & AST_F_METHOD) && n->nlist > 0 && n->list[0]->kind == AST_NAME &&
        strcmp(n->list[0]->name, name) == 0)
        return 1;
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        if (ast_mutates_list(kids[i], name))
            return 1;
    for (int i = 0; i < n->nlist; i++)
        if (ast_mutates_list(n->list[i], name))
            return 1;
    return 0;
}

int ast_const_find(const ast_module *m, const char *name)
{
    int lo = 0, hi = m->const_order ? m->nconsts : 0;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(m->consts[m->const_order[mid]].name, name);
        if (c == 0)
            return m->const_order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int ast_same_type(const cfx_type *a, const cfx_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    if (a->rank < 0) /* lists: one type per list variable */
        return a->dims[0] == b->dims[0];
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

/* ---- the blocks a statement holds -------------------------------------------------------- */

int ast_child_blocks(const ast_node *s)
{
    switch (s->kind) {
    case AST_IF:
    case AST_SWITCH:
        return s->nlist;
    case AST_WHILE:
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        return 1;
    default:
        return 0;
    }
}

ast_node *ast_child_block(const ast_node *s, int k)
{
    switch (s->kind) {
    case AST_IF:
    case AST_SWITCH:
        return s->list[k]->b; /* the arm's, the case's */
    case AST_WHILE:
        return s->b;
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        return s->d;
    default:
        return NULL;
    }
}
