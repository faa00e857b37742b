/* What probe_api.c's subcommands share with those of probe_api36.c: the
 * verdicts ("clean", "defect: why"; their exit status) and the device
 * probed (CLRT_TEST_DEVICE, else cpu). */
#ifndef PROBE_API_H
#define PROBE_API_H

#include <clrt/clrt.h>

int clean(void);
int defect(const char *why);
clrt_device *dev(void);

/* Issue 36 (probe_api36.c). */
int probe36_load_many_tensors(void);
int probe36_checkpoint_many_tensors(void);
int probe36_clblast_huge_mwg(void);
int probe36_child_name_not_utf8(void);
int probe36_safetensors_nul_name(void);
int probe36_winograd_not_applicable(void);
int probe36_residual_broadcast(void);

/* Issue 36's numerical defects, items 1, 2 and 3 (probe_numerics.c). */
int probe_bn_outlier(void);
int probe_bn_huge(void);
int probe_xent_ignored_grad(void);

#endif
