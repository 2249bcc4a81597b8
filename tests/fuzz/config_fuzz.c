/* config_fuzz.c - a libFuzzer target for the config-file parser
 * (shim/core/options.c): any bytes as a config file must parse without a crash,
 * a hang or a sanitizer report, leave every option valid (counts within
 * their range, a known log level), and report each bad line on stderr.
 * Built with clang -fsanitize=fuzzer,address,undefined when clang is found
 * (tests/fuzz/CMakeLists.txt); the CI runs it for a fixed number of inputs
 * from the example config. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/reprise-config-fuzz.%d", (int)getpid());
        setenv("REPRISE_CONFIG", path, 1);
        /* Errors go to stderr: quiet them, they are expected here. */
        freopen("/dev/null", "w", stderr);
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    rp__options_reset();
    rp__options_parse();
    if (rp__option(RP_OPTION_WARMUP).count < 1 || rp__option(RP_OPTION_WARMUP).count > 1000000 ||
        rp__option(RP_OPTION_MAX_OPS).count < 1 || rp__option(RP_OPTION_TABLE).count < 16 ||
        rp__option(RP_OPTION_LOG).level < RP_LOG_ERROR || rp__option(RP_OPTION_LOG).level > RP_LOG_TRACE)
        abort(); /* an option outside its range: the parser let a bad value in */
    rp__option_kernel_allowed("some_kernel_name");
    return 0;
}
