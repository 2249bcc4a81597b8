/* Unit tests of names.c and explain.c: a C++ kernel name is demangled by the
 * C++ runtime's demangler and shortened sensibly for a table; a C name and a
 * name the demangler refuses stay as they are; a bound is named by its
 * option and the suggestions are drawn from the counters, at most three. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "explain.h"
#include "names.h"

/* nvcc's name for `template __global__ void tk::scale_inplace<float>(float*, int, float)`. */
#define SCALE "_ZN2tk13scale_inplaceIfEEvPT_iS1_"
/* The kind of name PyTorch's kernels have (g++ mangling of a template in a
 * nested namespace with template arguments that are templates). */
#define FILL "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"

/* If demangling failed, names would show mangled everywhere a person reads them. */
static void a_cxx_name_is_demangled_as_cxxfilt_does(void **state)
{
    (void)state;
    char out[512];
    assert_int_equal(rp__name_demangle(SCALE, out, sizeof out), 1);
    assert_string_equal(out, "void tk::scale_inplace<float>(float*, int, float)");
}

/* A C kernel's name, and a "_Z" name that is not valid, must come back unchanged. */
static void a_c_name_or_a_bad_mangling_stays_as_it_is(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(rp__name_demangle("stencil3", out, sizeof out), 0);
    assert_string_equal(out, "stencil3");
    assert_int_equal(rp__name_demangle("_Zbogus", out, sizeof out), 0);
    assert_string_equal(out, "_Zbogus");
    rp__name_short("_Zbogus", out, sizeof out, 32);
    assert_string_equal(out, "_Zbogus");
    /* Too long for the column: cut, and marked. */
    rp__name_short("a_c_kernel_with_a_very_long_name_indeed", out, sizeof out, 16);
    assert_string_equal(out, "a_c_kernel_wi...");
}

/* A short form keeps the qualified name while it fits, then folds template
 * arguments, then drops namespaces: never a mangled name in a table. */
static void a_short_name_drops_the_signature_then_templates_then_namespaces(void **state)
{
    (void)state;
    char out[128];
    rp__name_short(SCALE, out, sizeof out, 60);   /* fits whole */
    assert_string_equal(out, "void tk::scale_inplace<float>(float*, int, float)");
    rp__name_short(SCALE, out, sizeof out, 32);   /* no return type, no parameters */
    assert_string_equal(out, "tk::scale_inplace<float>");
    rp__name_short(FILL, out, sizeof out, 48);    /* template arguments folded */
    assert_string_equal(out, "at::native::vectorized_elementwise_kernel<...>");
    rp__name_short(FILL, out, sizeof out, 36);    /* namespaces dropped */
    assert_string_equal(out, "vectorized_elementwise_kernel<...>");
    rp__name_short(FILL, out, sizeof out, 20);    /* then cut */
    assert_string_equal(out, "vectorized_elemen...");
    assert_int_equal(strlen(out), 20);
}

/* Without the option's name, "bound hits: 3" tells the user nothing. */
static void a_bound_is_named_by_its_option_and_limit(void **state)
{
    (void)state;
    char out[256];
    rp__bound_describe(RP_BOUND_OPS, 4096, out, sizeof out);
    assert_non_null(strstr(out, "REPRISE_MAX_OPS (4096): a stream queued more ops than that"));
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        assert_non_null(rp__bounds[b].key);
        assert_non_null(rp__bounds[b].what);
        assert_non_null(rp__bounds[b].todo);
    }
}

/* Advice is drawn from the counters: none when nothing calls for it, the
 * bound that sent work eager with its share, at most three, biggest first. */
static void advice_comes_from_the_counters_at_most_three_biggest_first(void **state)
{
    (void)state;
    char out[RP_ADVICE_MAX][RP_ADVICE_LEN];
    struct rp__run_fact in;
    memset(&in, 0, sizeof in);
    in.ops = 1000, in.replayed = 900;
    assert_int_equal(rp__advice(&in, out), 0);

    in.replayed = 0;
    in.eager[RP_EAGER_BOUND] = 990;
    in.hits[RP_BOUND_OPS] = 3;
    in.limits[RP_BOUND_OPS] = 4096;
    assert_int_equal(rp__advice(&in, out), 1);
    assert_non_null(strstr(out[0], "REPRISE_MAX_OPS (hit 3 times) sent 990 ops (99.0%) eager"));
    assert_non_null(strstr(out[0], "--max-ops"));

    in.hits[RP_BOUND_GRAPHS] = 1;      /* two bounds: the ops are not split by bound */
    in.hits[RP_BOUND_STAGING] = 2;
    in.hits[RP_BOUND_MEMORY] = 5;
    in.program_captures = 2, in.eager[RP_EAGER_PROGRAM_CAPTURE] = 1;
    assert_int_equal(rp__advice(&in, out), 3);
    assert_non_null(strstr(out[0], "a fixed bound was hit 5 times"));
    assert_non_null(strstr(out[1], "REPRISE_MAX_OPS was hit 3 times"));
    assert_non_null(strstr(out[2], "REPRISE_MAX_STAGING was hit 2 times"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cxx_name_is_demangled_as_cxxfilt_does),
        cmocka_unit_test(a_c_name_or_a_bad_mangling_stays_as_it_is),
        cmocka_unit_test(a_short_name_drops_the_signature_then_templates_then_namespaces),
        cmocka_unit_test(a_bound_is_named_by_its_option_and_limit),
        cmocka_unit_test(advice_comes_from_the_counters_at_most_three_biggest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
