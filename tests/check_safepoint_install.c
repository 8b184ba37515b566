/* check_safepoint, install: installing the reference VM at the wrong
 * time or half of its safepoint form is refused, and threads the VM did
 * not start are attached once (or refused) by clgc_call_active and
 * detached when they exit. The "install" case runs first: with CK_FORK=no
 * one of its tests needs a clgc never used (it forks for that). */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "safepoint.h"

/* Test d: misuse. */

/* Needs a clgc never used, hence first in CK_FORK=no runs; forks so that
 * the process it runs in stays unused. */
START_TEST(install_after_use_is_einuse)
{
    int status;
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Any crossing fixes the default runtime for good. */
        clgc_call_safe(nothing, NULL);
        _exit(-refvm_install());
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), -CLGC_EINUSE);
}
END_TEST

START_TEST(partial_safepoint_form_is_einval)
{
    clgc_runtime_t rt;

    refvm_runtime(&rt);
    rt.safepoint = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    refvm_runtime(&rt);
    rt.stop_requested = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    refvm_runtime(&rt);
    rt.thread_state = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    /* Refused installs leave clgc unused: the whole form installs. */
    vm_setup();
    ck_assert_str_eq(clgc_runtime_current()->name, "refvm");
}
END_TEST

START_TEST(install_twice_is_ealready)
{
    vm_setup();
    ck_assert_int_eq(refvm_install(), CLGC_EALREADY);
    ck_assert_str_eq(clgc_runtime_current()->name, "refvm");
}
END_TEST

/* What a thread the VM did not start saw of clgc_call_active. */
struct foreign {
    int rc, rc_again, called;
    int attached, registered, word;
    int word_after, word_after_again; /* back in the thread's own code */
    unsigned threads;
};

static void *
foreign_active(void *arg)
{
    struct foreign *f = arg;

    f->called++;
    f->attached = clgc_thread_attached();
    f->registered = refvm_registered();
    f->word = word_of(refvm_state_word());
    f->threads = vm_stats().threads;
    return NULL;
}

static void *
foreign_thread(void *arg)
{
    struct foreign *f = arg;

    f->rc = clgc_call_active(foreign_active, f, NULL);
    f->word_after = word_of(refvm_state_word());
    f->rc_again = clgc_call_active(foreign_active, f, NULL);
    f->word_after_again = word_of(refvm_state_word());
    return NULL;
}

static struct foreign
foreign_run(void)
{
    struct foreign f;
    pthread_t t;

    memset(&f, 0, sizeof(f));
    f.attached = f.registered = -1;
    ck_assert_int_eq(pthread_create(&t, NULL, foreign_thread, &f), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    return f;
}

START_TEST(refused_thread_is_not_attached)
{
    struct refvm_stats before, after;
    struct foreign f;

    vm_setup();
    before = vm_stats();
    refvm_allow_attach(0);
    f = foreign_run();
    refvm_allow_attach(1);
    after = vm_stats();

    ck_assert_int_eq(f.rc, CLGC_ENOTATTACHED);
    ck_assert_int_eq(f.rc_again, CLGC_ENOTATTACHED);
    ck_assert_int_eq(f.called, 0);
    ck_assert_uint_eq(after.refused - before.refused, 2);
    ck_assert_uint_eq(after.attaches - before.attaches, 0);
    ck_assert_uint_eq(after.threads, before.threads);
}
END_TEST

START_TEST(foreign_thread_attaches_once_detaches_at_exit)
{
    struct refvm_stats before, after;
    struct foreign f;

    vm_setup();
    before = vm_stats();
    f = foreign_run();
    after = vm_stats(); /* joined: its exit destructor has run */

    ck_assert_int_eq(f.rc, CLGC_OK);
    ck_assert_int_eq(f.rc_again, CLGC_OK);
    ck_assert_int_eq(f.called, 2);
    ck_assert_int_eq(f.attached, 1);
    ck_assert_int_eq(f.registered, 1);
    ck_assert_int_eq(f.word, CLGC_STATE_RUNNING);
    /* Between the calls the thread runs no VM code: no collection may
     * wait for it. */
    ck_assert_int_eq(f.word_after, CLGC_STATE_SAFE);
    ck_assert_int_eq(f.word_after_again, CLGC_STATE_SAFE);
    ck_assert_uint_eq(f.threads, before.threads + 1);
    ck_assert_uint_eq(after.attaches - before.attaches, 1);
    ck_assert_uint_eq(after.detaches - before.detaches, 1);
    ck_assert_uint_eq(after.threads, before.threads);
}
END_TEST

Suite *
clgc_make_safepoint_install_suite(void)
{
    Suite *s = suite_create("safepoint");
    TCase *tc = test_case("install");

    /* First: see the top of check_safepoint.c. */
    tcase_add_test(tc, install_after_use_is_einuse);
    tcase_add_test(tc, partial_safepoint_form_is_einval);
    tcase_add_test(tc, install_twice_is_ealready);
    tcase_add_test(tc, refused_thread_is_not_attached);
    tcase_add_test(tc, foreign_thread_attaches_once_detaches_at_exit);
    suite_add_tcase(s, tc);
    return s;
}
