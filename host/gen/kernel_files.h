/* kernel_files.h: keeping and replacing the generated kernel by its cache key (kernel_files.c),
 * as Triton's dump and override directories do.
 *
 * CFX_KERNEL_DUMP=DIR: every kernel the compiled mode builds (device/compiled.cu) is written into
 * DIR as NAME, the kernel cache's key of the generated source ("<16 hex>-<arch>.cu"), whether
 * the cache has it or not. CFX_KERNEL_OVERRIDE=DIR: where DIR holds a file NAME, that text is
 * compiled instead of the generated source (and cached under its own key). Either unset or empty:
 * nothing is done. A directory that cannot be written only loses the dump. */
#ifndef CFX_KERNEL_FILES_H
#define CFX_KERNEL_FILES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file operations the kernel cache (device/compiled.cu) shares with the two below. */
/* mkdir -p of dir (changed and restored in place): 1 when it is a directory afterwards. */
int kernel_file_mkdirs(char *dir);
/* head (head_bytes) then body (body_bytes) into path, under a temporary name renamed into place
 * so that a reader never sees half a file: 0, or -1 (nothing left behind). */
int kernel_file_write(const char *path, const void *head, size_t head_bytes, const void *body,
                      size_t body_bytes);

/* Writes `source` into $CFX_KERNEL_DUMP/name (the directory made when missing). 1: written; 0:
 * no CFX_KERNEL_DUMP; -1: it could not be written. */
int kernel_file_dump(const char *name, const char *source);

/* The text of $CFX_KERNEL_OVERRIDE/name (free with free()), or NULL when there is no
 * CFX_KERNEL_OVERRIDE, no such file, or it cannot be read. */
char *kernel_file_override(const char *name);

#ifdef __cplusplus
}
#endif
#endif
