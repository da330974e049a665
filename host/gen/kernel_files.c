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

int kernel_file_mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0700); /* an ancestor that exists, or cannot be made: the last mkdir says */
        *p = '/';
    }
    return mkdir(dir, 0700) == 0 || errno == EEXIST;
}

int kernel_file_write(const char *path, const void *head, size_t head_bytes, const void *body,
                      size_t body_bytes)
{
    char tmp[1200];
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = fwrite(head, 1, head_bytes, f) == head_bytes && fwrite(body, 1, body_bytes, f) == body_bytes;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int kernel_file_dump(const char *name, const char *source)
{
    char dir[1100], path[1100];
    if (!file_in("CFX_KERNEL_DUMP", name, path, sizeof path))
        return 0;
    snprintf(dir, sizeof dir, "%s", getenv("CFX_KERNEL_DUMP"));
    if (!kernel_file_mkdirs(dir))
        return -1;
    return kernel_file_write(path, "", 0, source, strlen(source)) == 0 ? 1 : -1;
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
