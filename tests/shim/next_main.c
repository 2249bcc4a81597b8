/* The RTLD_NEXT test program: see nextlib.c. */
#include <stdio.h>

int next_value(void);
int next_value_after_a(void);

int main(void)
{
    /* Also keeps libnext_b needed under --as-needed; from here the first
     * definition in the search order is libnext_a's. */
    if (next_value() != 1) {
        fprintf(stderr, "next_main: next_value() is not libnext_a's\n");
        return 1;
    }
    int got = next_value_after_a();
    if (got != 2) {
        fprintf(stderr, "next_main: dlsym(RTLD_NEXT) from libnext_a gave %d, want 2\n", got);
        return 1;
    }
    printf("next_main: ok\n");
    return 0;
}
