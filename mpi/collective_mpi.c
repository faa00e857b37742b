/* libclrt_mpi: a clrt_collective over an MPI communicator (clrt/mpi.h).
 * Counts above INT_MAX elements go in several calls, MPI's counts being
 * int. */
#include <clrt/mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    clrt_collective c; /* first: what callers hold */
    MPI_Comm comm;     /* a duplicate whose errors return */
} mpi_collective;

static clrt_status mpi_fail(const mpi_collective *m, int err, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", err);
    return clrt_set_error(CLRT_ECOMM, "%s failed on rank %d of %d: %s", call, m->c.rank, m->c.size,
                          msg);
}

/* buf[0..n) of `type` (elem bytes each) summed over the group, in place. */
static clrt_status sum(void *ctx, void *buf, int64_t n, MPI_Datatype type, size_t elem)
{
    const mpi_collective *m = ctx;
    for (int64_t off = 0; off < n; off += INT_MAX) {
        int count = n - off < INT_MAX ? (int)(n - off) : INT_MAX;
        int err = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + (size_t)off * elem, count, type,
                                MPI_SUM, m->comm);
        if (err != MPI_SUCCESS)
            return mpi_fail(m, err, "MPI_Allreduce");
    }
    return CLRT_OK;
}

static clrt_status sum_f32(void *ctx, float *buf, int64_t n)
{
    return sum(ctx, buf, n, MPI_FLOAT, sizeof(float));
}

static clrt_status sum_f64(void *ctx, double *buf, int64_t n)
{
    return sum(ctx, buf, n, MPI_DOUBLE, sizeof(double));
}

static clrt_status broadcast(void *ctx, void *buf, size_t bytes, int root)
{
    const mpi_collective *m = ctx;
    for (size_t off = 0; off < bytes; off += INT_MAX) {
        int count = bytes - off < INT_MAX ? (int)(bytes - off) : INT_MAX;
        int err = MPI_Bcast((char *)buf + off, count, MPI_BYTE, root, m->comm);
        if (err != MPI_SUCCESS)
            return mpi_fail(m, err, "MPI_Bcast");
    }
    return CLRT_OK;
}

static int mpi_ready(const char *api)
{
    int init = 0, done = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&done);
    if (init && !done)
        return 1;
    clrt_set_error(CLRT_ESTATE, "%s: MPI is %s; call MPI_Init (or MPI_Init_thread) first", api,
                   done ? "finalised" : "not initialised");
    return 0;
}

clrt_collective *clrt_mpi_collective(MPI_Comm comm)
{
    if (!mpi_ready("clrt_mpi_collective"))
        return NULL;
    mpi_collective *m = calloc(1, sizeof *m);
    if (!m) {
        clrt_set_error(CLRT_ENOMEM, "clrt_mpi_collective: out of host memory");
        return NULL;
    }
    int err = MPI_Comm_dup(comm, &m->comm);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(m->comm, &m->c.rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(m->comm, &m->c.size);
    if (err != MPI_SUCCESS) {
        mpi_fail(m, err, "clrt_mpi_collective: MPI_Comm_dup");
        free(m);
        return NULL;
    }
    m->c.ctx = m;
    m->c.sum_f32 = sum_f32;
    m->c.sum_f64 = sum_f64;
    m->c.broadcast = broadcast;
    return &m->c;
}

void clrt_mpi_collective_free(clrt_collective *c)
{
    if (!c)
        return;
    mpi_collective *m = (mpi_collective *)c;
    MPI_Comm_free(&m->comm);
    free(m);
}

int clrt_mpi_local_rank(MPI_Comm comm)
{
    MPI_Comm local;
    int rank = -1;
    if (!mpi_ready("clrt_mpi_local_rank"))
        return -1;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    if (err == MPI_SUCCESS) {
        MPI_Comm_rank(local, &rank);
        MPI_Comm_free(&local);
        return rank;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    clrt_set_error(CLRT_ECOMM, "clrt_mpi_local_rank: MPI_Comm_split_type failed: %s", msg);
    return -1;
}
