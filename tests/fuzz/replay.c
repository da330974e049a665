/* replay.c: test_fuzz_replay, the fuzz target (fuzz_compile.c) over every file in
 * tests/fuzz/regress/, the inputs the fuzzer once found wrong, and over the .cfx files of
 * graphs/, its seed corpus. Built with the ordinary compiler, so the regressions are tested without clang; under
 * -DCFX_SANITIZE=ON they run under ASan and UBSan as they did in the fuzzer. A failure is an
 * abort or a sanitizer report. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_dir(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return -1;
    }
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name), k = strlen(suffix);
        if (ent->d_name[0] == '.' || len < k || strcmp(ent->d_name + len - k, suffix) != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        long size = 0;
        char *data = test_read_file(path, &size);
        if (!CHECK(data != NULL))
            continue;
        fprintf(stderr, "replay %s\n", path);
        LLVMFuzzerTestOneInput((const uint8_t *)data, (size_t)size);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

#ifdef CFX_REPLAY_ONNX
/* test_fuzz_onnx_replay: fuzz_onnx.c over tests/fuzz/regress/'s .onnx files and over every
 * .onnx file in the folders named on the command line (the models of make_models.py). */
int main(int argc, char **argv)
{
    int regress = replay_dir(CFX_SOURCE_DIR "/tests/fuzz/regress", ".onnx");
    CHECK(regress >= 1);
    for (int i = 1; i < argc; i++)
        CHECK(replay_dir(argv[i], ".onnx") >= 0);
    return test_finish("test_fuzz_onnx_replay");
}
#else
int main(void)
{
    int regress = replay_dir(CFX_SOURCE_DIR "/tests/fuzz/regress", ".cfx");
    int seeds = replay_dir(CFX_SOURCE_DIR "/graphs", ".cfx");
    CHECK(regress >= 1);
    CHECK(seeds > 10);
    return test_finish("test_fuzz_replay");
}
#endif
