/* Names that go into safetensors headers (issue 36, item 9): a child name
 * that is not UTF-8 ("\xff") was taken and saved, and PyTorch's reader
 * refused the file ("invalid UTF-8 in header"). Such a name is refused
 * where the container is made, naming the child and the byte, and the
 * children are freed as on every refusal; names that are UTF-8, ASCII or
 * not, are taken and round-trip through a save and a load. The writer
 * refuses any name or metadata string that is not UTF-8 (nothing written),
 * and a checkpoint's run description is checked before anything is saved.
 * The reader's side (a "\u0000" escape, raw bytes that are not UTF-8) is in
 * test_checkpoint's table of malformed files. */
#include "testutil.h"

#include "runtime/tensor/safetensors_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];

static const char *scratch(const char *name)
{
    static char path[640];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/clrt-names-XXXXXX", tmp ? tmp : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Names that are not UTF-8: a lone byte, a truncated sequence, an overlong
 * '/', a UTF-16 surrogate, a code point past U+10FFFF. */
static const struct {
    const char *name, *needle;
} not_utf8[] = {{"\xff", "byte 0xff at offset 0"},
                {"conv\xc3", "byte 0xc3 at offset 4"},
                {"a\xc0\xaf", "byte 0xc0 at offset 1"},
                {"\xed\xa0\x80x", "byte 0xed at offset 0"},
                {"\xf4\x90\x80\x80", "byte 0xf4 at offset 0"}};

START_TEST(child_names_that_are_not_utf8_are_refused)
{
    const char *names[2] = {"ok", not_utf8[_i].name};
    clrt_module *mods[2] = {TU_NONNULL(clrt_relu()), TU_NONNULL(clrt_relu())};
    clrt_module *m = clrt_sequential_named(2, mods, names);
    if (m) {
        clrt_module_free(m);
        ck_abort_msg("clrt_sequential_named took child name %d's bytes, which are not UTF-8", _i);
    }
    tu_assert_error(CLRT_EINVAL, "clrt_sequential_named: child 1's name", "is not UTF-8",
                    not_utf8[_i].needle, "PyTorch", NULL);
}
END_TEST

/* UTF-8 names beyond ASCII are PyTorch attribute names too: taken, saved
 * and loaded back under the same state names. */
START_TEST(utf8_names_round_trip)
{
    const char *names[2] = {"größe", "层"};
    clrt_module *mods[2] = {TU_NONNULL(clrt_linear(2, 3)), TU_NONNULL(clrt_linear(3, 1))};
    clrt_module *m = TU_NONNULL(clrt_sequential_named(2, mods, names));
    TU_OK(clrt_module_to(m, tu_device()));
    const char *path = scratch("utf8.safetensors");
    TU_OK(clrt_module_save(m, path));
    clrt__st_file f;
    TU_OK(clrt__st_read(path, &f));
    ck_assert_ptr_nonnull(clrt__st_find(&f, "größe.weight"));
    ck_assert_ptr_nonnull(clrt__st_find(&f, "层.bias"));
    clrt__st_close(&f);
    TU_OK(clrt_module_load(m, path));
    clrt_module_free(m);
}
END_TEST

/* The last line: nothing that is not UTF-8 reaches a file. */
START_TEST(writer_refuses_text_that_is_not_utf8)
{
    static const float v = 1;
    static const int64_t one[1] = {1};
    const char *path = scratch("bad.safetensors");
    clrt__st_item item = {"w\xfe", "F32", 1, one, &v, sizeof v};
    ck_assert_int_eq(clrt__st_write(path, &item, 1, NULL, 0, "test"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "tensor name 'w\\xfe' is not UTF-8", NULL);
    ck_assert(!exists(path));
    item.name = "w";
    const char *meta[2] = {"key", "value \x80"};
    ck_assert_int_eq(clrt__st_write(path, &item, 1, meta, 1, "test"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "metadata string 'value \\x80' is not UTF-8", NULL);
    ck_assert(!exists(path));
}
END_TEST

START_TEST(checkpoint_run_that_is_not_utf8_is_refused_first)
{
    clrt_module *m = TU_NONNULL(clrt_linear(2, 2));
    TU_OK(clrt_module_to(m, tu_device()));
    clrt_tensor *p[2], *g[2];
    ck_assert_int_eq(clrt_module_parameters(m, NULL, p, g, 2), 2);
    clrt_optimizer *o = TU_NONNULL(clrt_sgd(2, p, g, 0.1, 0, 0));
    const char *run[2] = {"data", "/home/\xe9t\xe9"}; /* Latin-1, not UTF-8 */
    const char *path = scratch("ckpt");
    ck_assert_int_eq(clrt_checkpoint_save(path, m, o, 1, 1, run), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "run pair 0's value is not UTF-8", NULL);
    ck_assert(!exists(path));
    clrt_optimizer_free(o);
    clrt_module_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tu_tcase("names");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, child_names_that_are_not_utf8_are_refused, 0,
                        (int)(sizeof not_utf8 / sizeof not_utf8[0]));
    tcase_add_test(tc, utf8_names_round_trip);
    tcase_add_test(tc, writer_refuses_text_that_is_not_utf8);
    tcase_add_test(tc, checkpoint_run_that_is_not_utf8_is_refused_first);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
