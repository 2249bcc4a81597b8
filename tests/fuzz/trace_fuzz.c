/* trace_fuzz.c - a libFuzzer target for the trace reader (tools/traceread.c,
 * what `reprise replay` and `reprise trace info` read with): any bytes as a
 * trace must be read without a crash, a hang or a sanitizer report; reading
 * either ends (an END record, or the end of an unclosed trace, with a notice
 * naming the byte) or fails with a one-line error naming the byte offset;
 * and reading again from the start (rt_rewind) gives the same records.
 * Built with clang -fsanitize=fuzzer,address,undefined where clang is found
 * (tests/fuzz/CMakeLists.txt), with the check bytes not checked
 * (RT_FUZZ_NO_CHECK) so that mutated inputs reach the decoding itself; the
 * CI runs it for a fixed number of inputs grown from the committed traces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "traceread.h"

static void one_line_naming_a_byte(const char *msg)
{
    if (!msg[0] || strchr(msg, '\n') || !strstr(msg, ": byte "))
        abort();
}

/* Reads every record; returns how many, and their tags' sum in *sig. */
static size_t read_all(struct rt_reader *r, int *rc, uint64_t *sig)
{
    struct rt_rec rec;
    size_t n = 0;
    *sig = 0;
    while ((*rc = rt_next(r, &rec)) == 1) {
        n++;
        *sig = *sig * 31 + rec.tag + rec.offset;
        if (rec.tag == RP_TR_CALL && rec.call.params) {
            /* The parameters a launch names are the function's psize bytes:
             * touch them all (ASan checks the bounds). */
            volatile unsigned char x = 0;
            size_t ps = r->funcs[rec.call.func].psize;
            for (size_t i = 0; i < ps; i++)
                x ^= rec.call.params[i];
            (void)x;
        }
        if (n > 1000000)
            abort(); /* more records than bytes could hold */
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rt_reader r;
    if (rt_open_mem(&r, data, size, "fuzz") != 0) {
        one_line_naming_a_byte(r.err);
        rt_close(&r);
        return 0;
    }
    int rc1, rc2;
    uint64_t s1, s2;
    size_t n1 = read_all(&r, &rc1, &s1);
    if (rc1 < 0)
        one_line_naming_a_byte(r.err);
    else if (!r.ended)
        one_line_naming_a_byte(r.notice);
    rt_rewind(&r);
    size_t n2 = read_all(&r, &rc2, &s2);
    if (n1 != n2 || rc1 != rc2 || s1 != s2)
        abort(); /* reading again gave other records */
    rt_close(&r);
    return 0;
}
