/* Why the ASan pass runs with intercept_tls_get_addr=0 (tests/CMakeLists.txt),
 * shown on purpose:  dtls_probe MODULE
 *
 * GCC 12's sanitizer runtime (libasan8; LLVM's before its commit b1bd52cd,
 * "Fix tls_get_addr handling for glibc >=2.25") intercepts __tls_get_addr
 * to record each thread's dynamic TLS blocks for LeakSanitizer. On a
 * block's first use it guesses how glibc allocated it: an address 16 bytes
 * into a page is taken for a glibc 2.19 __signal_safe_memalign block, and
 * the two words before it are read as that block's start and size. glibc
 * 2.25 and later malloc dynamic TLS blocks, so under ASan a block lands 16
 * bytes into a page whenever its 32-byte chunk starts one, and the "header"
 * read is ASan's own chunk header. At exit LeakSanitizer's tracer scans that
 * range (for the main thread, from an address near 0) and dies: "Tracer
 * caught signal 11", "LeakSanitizer has encountered a fatal error". In
 * clrt's processes the main thread's block for libclang-cpp (PoCL's
 * compiler, 8 bytes of TLS) is allocated at the first kernel build, after a
 * number of small allocations that depends on the program, the failure
 * point in test_alloc_fail and the machine.
 *
 * This program puts the main thread's block for MODULE (dtls_module.c) at
 * 16 bytes into a page and exits. With the interception on it must crash
 * that way (test_lsan_dtls_intercepted); with the options every test gets
 * it must exit 0 (test_lsan_dtls). Exit 3: the block could not be placed,
 * so neither test says anything. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { CHUNK = 32, PAGE = 4096, FAKE_HEADER = 16, MAX_HELD = 8192 };

/* Held, not freed (a freed chunk goes to ASan's quarantine, not back to
 * the cache), and reachable from here, so not a leak. */
static void *held[MAX_HELD];

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dtls_probe MODULE\n");
        return 2;
    }
    void *module = dlopen(argv[1], RTLD_NOW);
    int *(*tls_addr)(void) = NULL;
    if (module)
        *(void **)&tls_addr = dlsym(module, "clrt_test_dtls_addr");
    if (!tls_addr) {
        fprintf(stderr, "dtls_probe: %s\n", dlerror());
        return 2;
    }
    /* malloc(4) takes ld.so's malloc(4) for the block from the same size
     * class: chunks CHUNK bytes apart within a batch of this thread's
     * cache. Allocate until the next chunk's user address is FAKE_HEADER
     * bytes into a page. */
    int n = 0;
    held[n++] = malloc(4);
    for (;;) {
        if (n == MAX_HELD)
            break;
        held[n] = malloc(4);
        intptr_t step = (char *)held[n] - (char *)held[n - 1];
        n++;
        if ((step == CHUNK || step == -CHUNK) &&
            ((uintptr_t)held[n - 1] + (uintptr_t)step) % PAGE == FAKE_HEADER)
            break;
    }
    int *block = tls_addr(); /* the first use: ld.so mallocs the block */
    printf("dtls_probe: the main thread's TLS block for the module is at %p (%d allocations "
           "before it)\n",
           (void *)block, n);
    if ((uintptr_t)block % PAGE != FAKE_HEADER) {
        fprintf(stderr, "dtls_probe: could not place the block %d bytes into a page\n",
                FAKE_HEADER);
        return 3;
    }
    return 0;
}
