/* The clrt side of the TensorBoard check (check_summary.py): reads lines
 * "tag step wall_time value" (value and wall_time as C99 hex floats, so
 * they arrive exactly) from stdin and writes them with clrt's summary
 * writer into a new event file in LOGDIR.
 *   summary_tool LOGDIR < scalars.txt */
#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char tag[300];
    long long step;
    double wall, value;
    if (argc != 2) {
        fprintf(stderr, "usage: summary_tool LOGDIR < scalars.txt\n");
        return 2;
    }
    clrt_summary_writer *w = clrt_summary_open(argv[1]);
    if (!w) {
        fprintf(stderr, "summary_tool: %s\n", clrt_last_error());
        return 1;
    }
    while (scanf("%299s %lld %la %la", tag, &step, &wall, &value) == 4)
        if (clrt_summary_scalar(w, tag, step, wall, (float)value) != CLRT_OK) {
            fprintf(stderr, "summary_tool: %s\n", clrt_last_error());
            return 1;
        }
    if (clrt_summary_close(w) != CLRT_OK) {
        fprintf(stderr, "summary_tool: %s\n", clrt_last_error());
        return 1;
    }
    return 0;
}
