/* Containers adopting their children (issue 25): a module has one owner.
 * A list that holds a module twice, or a module another container already
 * owns, is refused, since clrt_module_free would free it twice; on that
 * failure the container frees only the modules the caller gave it to own
 * (each once), as its "takes ownership, also when it fails" contract says.
 * The search for a module listed twice sorts the list (O(n log n)): a
 * Sequential of many children is built in a blink. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/lookup_internal.h"

clrt_status clrt__adopt_check(const char *api, int n, clrt_module **mods)
{
    for (int i = 0; i < n; i++) {
        if (!mods[i])
            return clrt__fail(CLRT_EINVAL, "%s: module %d is NULL%s%s%s", api, i,
                              *clrt_last_error() ? " (" : "", clrt_last_error(),
                              *clrt_last_error() ? ")" : "");
        if (mods[i]->owned)
            return clrt__fail(CLRT_EINVAL,
                              "%s: module %d (%s) already belongs to another container; a module "
                              "has one owner (clrt_module_clone makes a copy)",
                              api, i, mods[i]->vt->kind);
    }
    int j = 0, i = 0, again = clrt__first_repeat(n, (const void *const *)mods, &j, &i);
    if (again < 0)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
    if (again)
        return clrt__fail(CLRT_EINVAL,
                          "%s: module %d is module %d again (%s); a module has one owner "
                          "(clrt_module_clone makes a copy)",
                          api, i, j, mods[i]->vt->kind);
    return CLRT_OK;
}

void clrt__adopt(int n, clrt_module **mods)
{
    for (int i = 0; i < n; i++)
        mods[i]->owned = 1;
}

void clrt__adopt_failed(int n, clrt_module **mods)
{
    for (int i = 0; mods && i < n; i++) {
        int again = 0;
        for (int j = 0; j < i && !again; j++)
            again = mods[j] == mods[i];
        if (!again && mods[i] && !mods[i]->owned) /* not read once freed */
            clrt_module_free(mods[i]);
    }
}
