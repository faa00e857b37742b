/* For dtls_probe.c: a module with one thread-local int. Loaded with
 * dlopen, its TLS is dynamic: ld.so mallocs a thread's block on that
 * thread's first __tls_get_addr call for it. */
int *clrt_test_dtls_addr(void);

static _Thread_local int dtls_var;

int *clrt_test_dtls_addr(void) { return &dtls_var; }
