/* test_kernel_files.c: CFX_KERNEL_DUMP and CFX_KERNEL_OVERRIDE (host/gen/kernel_files.h), the files
 * by which the compiled mode keeps and replaces its generated kernel. Without a GPU the build
 * that calls them (device/compiled.cu) cannot run, so this tests the two calls it makes: a dump
 * goes into the directory (made when missing) under the name given, byte for byte; an override
 * is the text of the file of that name and nothing for any other name; neither does anything
 * when its variable is unset or empty, nor for a name that would leave the directory. The
 * kernel cache's own file calls (its directory, its header and image written in one) too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/gen/kernel_files.h"
#include "testutil.h"

int main(void)
{
    char dir[700], path[1000], value[900];
    static const char name[] = "0123456789abcdef-sm_90.cu";
    static const char text[] = "/* cfx_compiled */\n#include \"compiled_kernel.cuh\"\nint x = 1;\n";
    if (test_workdir("test_kernel_files", dir, sizeof dir) != 0)
        return 1;

    /* dump: nothing without the variable */
    unsetenv("CFX_KERNEL_DUMP");
    CHECK_INT(kernel_file_dump(name, text), 0);
    setenv("CFX_KERNEL_DUMP", "", 1);
    CHECK_INT(kernel_file_dump(name, text), 0);
    /* into a directory two levels down that does not exist yet */
    snprintf(value, sizeof value, "%s/dump/kernels", dir);
    setenv("CFX_KERNEL_DUMP", value, 1);
    CHECK_INT(kernel_file_dump(name, text), 1);
    snprintf(path, sizeof path, "%s/%s", value, name);
    long len = 0;
    char *back = test_read_file(path, &len);
    CHECK(back && len == (long)strlen(text) && memcmp(back, text, (size_t)len) == 0);
    free(back);
    CHECK_INT(kernel_file_dump("../escape.cu", text), 0);
    snprintf(path, sizeof path, "%s/dump/escape.cu", dir);
    FILE *escaped = fopen(path, "rb");
    CHECK(escaped == NULL);
    if (escaped)
        fclose(escaped);
    unsetenv("CFX_KERNEL_DUMP");

    /* override: the file of that name, and only it */
    snprintf(value, sizeof value, "%s/override", dir);
    setenv("CFX_KERNEL_OVERRIDE", value, 1);
    CHECK(kernel_file_override(name) == NULL); /* no such directory */
    snprintf(path, sizeof path, "mkdir -p '%s'", value);
    CHECK_INT(system(path), 0);
    CHECK(kernel_file_override(name) == NULL); /* no such file */
    snprintf(path, sizeof path, "%s/%s", value, name);
    FILE *f = fopen(path, "wb");
    if (CHECK(f != NULL)) {
        fputs("/* by hand */\n", f);
        fclose(f);
    }
    char *over = kernel_file_override(name);
    CHECK_STR(over ? over : "(none)", "/* by hand */\n");
    free(over);
    CHECK(kernel_file_override("fedcba9876543210-sm_90.cu") == NULL);
    unsetenv("CFX_KERNEL_OVERRIDE");
    CHECK(kernel_file_override(name) == NULL);

    /* the kernel cache's write: its header, then the image, in one file, no temporary left;
     * its directory made three levels down */
    snprintf(value, sizeof value, "%s/cache/a/b", dir);
    CHECK_INT(kernel_file_mkdirs(value), 1);
    CHECK_INT(kernel_file_mkdirs(value), 1); /* there already */
    snprintf(path, sizeof path, "%s/k.cubin", value);
    CHECK_INT(kernel_file_write(path, "HEAD", 4, "image", 5), 0);
    back = test_read_file(path, &len);
    CHECK(back && len == 9 && memcmp(back, "HEADimage", 9) == 0);
    free(back);
    snprintf(path, sizeof path, "%s/nowhere/k.cubin", value); /* a directory that is not there */
    CHECK_INT(kernel_file_write(path, "HEAD", 4, "image", 5), -1);

    test_workdir_remove(dir);
    return test_finish("test_kernel_files");
}
