/* kernel_files.c: CFX_KERNEL_DUMP and CFX_KERNEL_OVERRIDE (kernel_files.h). */
#include "kernel_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* $var/name into path; 0 when var is unset or empty or the path does not fit. */
static int file_in(const char *var, const char *name, char *path, size_t len)
{
    const char *dir = getenv(var);
    if (!dir || !dir[0] || !name || !name[0] || strchr(name, '/'))
        return 0;
    int n = snprintf(path, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len;
}

int kernel_file_dump(const char *name, const char *source)
{
    char path[1100], tmp[1200];
    if (!file_in("CFX_KERNEL_DUMP", name, path, sizeof path))
        return 0;
    /* mkdir -p of the directory */
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            *p = '/';
            return -1;
        }
        *p = '/';
    }
    /* under a temporary name and renamed, so that a reader never sees half a file */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    size_t n = strlen(source);
    int ok = fwrite(source, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 1;
}

char *kernel_file_override(const char *name)
{
    char path[1100];
    if (!file_in("CFX_KERNEL_OVERRIDE", name, path, sizeof path))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
    } else {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}
