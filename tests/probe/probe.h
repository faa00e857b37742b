/* probe_api's subcommands kept in files of their own, each printing
 * "clean" or "defect: why" and returning 0 or 1 as probe_api.c's do. */
#ifndef CLRT_PROBE_H
#define CLRT_PROBE_H
#include <clrt/clrt.h>

/* probe_numerics.c: issue 36's numerical defects (items 1, 2 and 3). */
int probe_bn_outlier(void);
int probe_bn_huge(void);
int probe_xent_ignored_grad(void);

#endif
