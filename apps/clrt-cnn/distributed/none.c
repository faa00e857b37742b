/* clrt-cnn --distributed in a build without MPI (libclrt_mpi not built):
 * a clear refusal. */
#include "../cnn.h"

int cnn_dist_begin(int *argc, char ***argv, cnn_options *o)
{
    (void)argc, (void)argv, (void)o;
    fprintf(stderr, "clrt-cnn: --distributed: this clrt-cnn was built without MPI; install "
                    "libopenmpi-dev and configure with -DCLRT_MPI=ON\n");
    return 1;
}

void cnn_dist_abort(const cnn_options *o, int rc) { (void)o, (void)rc; }

void cnn_dist_end(cnn_options *o) { (void)o; }
