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
