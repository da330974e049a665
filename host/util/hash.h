/* hash.h: FNV-1a over bytes, 64 bits. Start with HASH_SEED; chain calls to hash several pieces. */
#ifndef CFX_HASH_H
#define CFX_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *c = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

#endif
