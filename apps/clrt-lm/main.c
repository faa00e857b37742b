/* clrt-lm: train a character-level GPT on a text, on any device (or
 * several, or an MPI job), or sample text from its checkpoint. */
#include "lm.h"

static int train(lm_options *o)
{
    lm_text t;
    if (app_outputs_check("clrt-lm", &o->job, o->save, NULL, NULL))
        return 1;
    clrt_device *d = app_pick_device("clrt-lm", o->device, o->devices, &o->job, o->dp, &o->n_dp);
    if (!d || lm_text_read(o->text, o->max_chars, &t))
        return 1;
    app_print_devices(o->dp, o->n_dp, d);
    int rc = o->profile ? app_profile_begin("clrt-lm") : 0;
    rc = rc || lm_train(o, &t, d);
    if (o->profile && rc == 0)
        rc = app_profile_report("clrt-lm", stdout);
    if (rc == 0)
        rc = app_outputs_finish("clrt-lm"); /* a trace that cannot be written fails the run */
    lm_text_free(&t);
    return rc;
}

static int sample(lm_options *o)
{
    clrt_device *d = app_pick_device("clrt-lm", o->device, NULL, NULL, o->dp, &o->n_dp);
    return !d || lm_sample(o, d);
}

int main(int argc, char **argv)
{
    clrt_host_blas_restart(argv); /* OpenBLAS's fastest kernels for this CPU */
    lm_options o;
    int parsed = lm_parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (o.distributed && app_job_begin(&argc, &argv, "clrt-lm", &o.job))
        return 1;
    int rc = o.sample ? sample(&o) : train(&o);
    if (o.distributed && rc != 0)
        app_job_abort(&o.job, rc); /* the other ranks may wait for this one */
    if (o.distributed)
        app_job_end(&o.job);
    /* Before exit: work still queued, and CLBlast's programs (Oclgrind cannot
     * release them at exit). */
    (void)clrt_device_synchronize_all();
    clrt_clblast_release_programs();
    return rc;
}
