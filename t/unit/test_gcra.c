
/*
 * Unit tests for cms_gcra.c.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_gcra.h"


#define B  120
#define T  500


/* one request; returns allowed */

static int
check(cms_gcra_state_t *st, int64_t now, cms_gcra_result_t *res)
{
    cms_gcra_check(st, now, B, T, res);

    return res->allowed;
}


/* drains a fresh bucket at now; returns how many were accepted */

static int
drain(cms_gcra_state_t *st, int64_t now)
{
    int                n;
    cms_gcra_result_t  res;

    for (n = 0; check(st, now, &res); n++) {
        /* void */
    }

    return n;
}


static void
test_burst(void **state)
{
    int                i;
    int64_t            t0;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;
    static const int64_t  starts[] = { 0, 1, 1700000000123LL };

    (void) state;

    for (t0 = 0; t0 < 3; t0++) {
        memset(&st, 0, sizeof(st));

        for (i = 1; i <= B; i++) {
            assert_true(check(&st, starts[t0], &res));
            assert_int_equal(res.remaining, B - i);
            assert_int_equal(res.retry_after_ms, 0);
            assert_int_equal(res.reset_after_ms, (int64_t) i * T);
        }

        /* the (B+1)th: one token is T away, the bucket full in B * T */

        assert_false(check(&st, starts[t0], &res));
        assert_int_equal(res.remaining, 0);
        assert_int_equal(res.retry_after_ms, T);
        assert_int_equal(res.reset_after_ms, (int64_t) B * T);

        /* refusals change nothing */

        assert_false(check(&st, starts[t0], &res));
        assert_int_equal(res.retry_after_ms, T);
        assert_int_equal(st.tat_ms, starts[t0] + (int64_t) B * T);
    }
}


static void
test_retry_after(void **state)
{
    int64_t            now;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    memset(&st, 0, sizeof(st));
    now = 1000;

    assert_int_equal(drain(&st, now), B);

    /* part of the way: the rest to wait */

    assert_false(check(&st, now + 1, &res));
    assert_int_equal(res.retry_after_ms, T - 1);
    assert_int_equal(res.reset_after_ms, (int64_t) B * T - 1);

    assert_false(check(&st, now + T - 1, &res));
    assert_int_equal(res.retry_after_ms, 1);

    /* after exactly retry_after: one accepted, none left */

    assert_true(check(&st, now + T, &res));
    assert_int_equal(res.remaining, 0);
    assert_int_equal(res.reset_after_ms, (int64_t) B * T);

    assert_false(check(&st, now + T, &res));
    assert_int_equal(res.retry_after_ms, T);
}


static void
test_steady_state(void **state)
{
    int                accepted;
    int64_t            now, step;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    memset(&st, 0, sizeof(st));
    assert_int_equal(drain(&st, 0), B);

    /* a client polling every 7 ms gets exactly one request per T */

    accepted = 0;

    for (step = 1; step <= 100; step++) {
        for (now = (step - 1) * T + 1; now <= step * T; now += 7) {
            accepted += check(&st, now, &res);
        }

        /* the token of step * T has not come yet unless now hit it */

        accepted += check(&st, step * T, &res);
        assert_int_equal(accepted, step);
        assert_false(check(&st, step * T, &res));
    }
}


static void
test_refill(void **state)
{
    int                i;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    memset(&st, 0, sizeof(st));
    assert_int_equal(drain(&st, 0), B);

    /* 3.5 intervals later: 3 tokens */

    assert_true(check(&st, 3 * T + T / 2, &res));
    assert_int_equal(res.remaining, 2);
    assert_int_equal(drain(&st, 3 * T + T / 2), 2);
    assert_false(check(&st, 3 * T + T / 2, &res));
    assert_int_equal(res.retry_after_ms, T / 2);

    /* reset_after after an accepted request: the bucket is full then */

    memset(&st, 0, sizeof(st));

    for (i = 0; i < 10; i++) {
        assert_true(check(&st, 5000, &res));
    }

    assert_int_equal(res.reset_after_ms, 10 * T);
    assert_true(check(&st, 5000 + 10 * T, &res));
    assert_int_equal(res.remaining, B - 1);

    /* one ms earlier it was one token short */

    memset(&st, 0, sizeof(st));

    for (i = 0; i < 10; i++) {
        assert_true(check(&st, 5000, &res));
    }

    assert_true(check(&st, 5000 + 10 * T - 1, &res));
    assert_int_equal(res.remaining, B - 2);
}


static void
test_remaining_is_exact(void **state)
{
    int                i, n;
    int64_t            now, left;
    uint32_t           x;
    cms_gcra_state_t   st, copy;
    cms_gcra_result_t  res;

    (void) state;

    /* whatever the history, "remaining" more requests pass at once */

    memset(&st, 0, sizeof(st));
    now = 0;
    x = 12345;

    for (i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        now += (x >> 16) % (3 * T);

        if (!check(&st, now, &res)) {
            continue;
        }

        left = res.remaining;
        copy = st;
        n = drain(&copy, now);
        assert_int_equal(n, left);
    }
}


/* the same limit as a leaky bucket of "debt" in ms, written apart */

static void
test_leaky_bucket_model(void **state)
{
    int                i, ok;
    int64_t            now, level, last;
    uint32_t           x;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    memset(&st, 0, sizeof(st));
    now = 1700000000000LL;
    last = now;
    level = 0;
    x = 777;

    for (i = 0; i < 100000; i++) {
        x = x * 1103515245u + 12345u;
        now += (x >> 16) % 4 == 0 ? (x >> 8) % 2000 : 0;

        level -= now - last;
        level = level < 0 ? 0 : level;
        last = now;
        ok = level + T <= (int64_t) B * T;

        if (ok) {
            level += T;
        }

        assert_int_equal(check(&st, now, &res), ok);
        assert_int_equal(res.reset_after_ms, level);

        if (!ok) {
            assert_int_equal(res.retry_after_ms,
                             level + T - (int64_t) B * T);
        }
    }
}


static void
test_clock_backwards(void **state)
{
    int                i, accepted;
    int64_t            now, back;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    /* drained, then the clock steps back an hour: refused for T, not an
     * hour, then one per T on the new clock */

    memset(&st, 0, sizeof(st));
    now = 1700000000000LL;
    back = now - 3600000;
    assert_int_equal(drain(&st, now), B);

    assert_false(check(&st, back, &res));
    assert_int_equal(res.retry_after_ms, T);
    assert_int_equal(res.reset_after_ms, (int64_t) B * T);
    assert_int_equal(res.remaining, 0);
    assert_int_equal(st.tat_ms, back + (int64_t) B * T);

    assert_false(check(&st, back + T - 1, &res));
    assert_int_equal(res.retry_after_ms, 1);

    accepted = 0;

    for (i = 1; i <= 10 * T; i++) {
        accepted += check(&st, back + T - 1 + i, &res);
    }

    assert_int_equal(accepted, 10);

    /* the step never lets through more than the rate would: 1 hour of
     * calls every ms across the step gets B + (hour / T) at most */

    memset(&st, 0, sizeof(st));
    accepted = drain(&st, now);

    for (i = 0; i < 3600000; i += 10) {
        accepted += check(&st, (i < 1800000 ? now : back) + i, &res);
        assert_true(res.allowed || res.retry_after_ms <= T);
    }

    assert_true(accepted <= B + 3600000 / T);

    /* a step back smaller than the state spans counts as less time
     * elapsed: the debt grows by the step */

    memset(&st, 0, sizeof(st));
    assert_int_equal(drain(&st, now), B);
    assert_true(check(&st, now + 10 * T, &res));
    assert_int_equal(res.remaining, 9);
    assert_true(check(&st, now + 9 * T, &res));
    assert_int_equal(res.remaining, 7);
    assert_int_equal(st.tat_ms, now + (int64_t) (B + 2) * T);

    /* back to the drained point and beyond it: refused, wait <= T */

    assert_int_equal(drain(&st, now + 9 * T), 7);
    assert_false(check(&st, now + 3 * T, &res));
    assert_int_equal(res.retry_after_ms, T);
}


static void
test_huge_values(void **state)
{
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    /* a gap of the whole range, then back to 0: no overflow (UBSan) */

    memset(&st, 0, sizeof(st));
    assert_int_equal(drain(&st, 0), B);

    assert_true(check(&st, INT64_MAX, &res));
    assert_int_equal(res.remaining, B - 1);
    assert_int_equal(res.reset_after_ms, T);
    assert_int_equal(st.tat_ms, CMS_GCRA_TIME_MAX + T);

    assert_false(check(&st, 0, &res));
    assert_int_equal(res.retry_after_ms, T);
    assert_int_equal(st.tat_ms, (int64_t) B * T);

    assert_true(check(&st, INT64_MAX, &res));

    /* a negative clock counts as 0: a fresh bucket at 0 */

    memset(&st, 0, sizeof(st));
    assert_true(check(&st, INT64_MIN, &res));
    assert_int_equal(st.tat_ms, T);
    assert_int_equal(res.remaining, B - 1);

    /* a corrupt state far in the future or negative */

    st.tat_ms = INT64_MAX;
    assert_false(check(&st, 1000, &res));
    assert_int_equal(res.retry_after_ms, T);
    assert_int_equal(res.reset_after_ms, (int64_t) B * T);

    st.tat_ms = INT64_MIN;
    assert_true(check(&st, 1000, &res));
    assert_int_equal(res.remaining, B - 1);

    /* absurd limits are clamped: burst and interval to 2^30 */

    memset(&st, 0, sizeof(st));
    cms_gcra_check(&st, INT64_MAX, INT64_MAX, INT64_MAX, &res);
    assert_true(res.allowed);
    assert_int_equal(res.remaining, CMS_GCRA_BURST_MAX - 1);
    assert_int_equal(res.reset_after_ms, CMS_GCRA_INTERVAL_MAX);

    cms_gcra_check(&st, INT64_MIN, INT64_MAX, INT64_MAX, &res);
    assert_false(res.allowed);
    assert_int_equal(res.retry_after_ms, CMS_GCRA_INTERVAL_MAX);
    assert_int_equal(res.reset_after_ms,
                     CMS_GCRA_INTERVAL_MAX * CMS_GCRA_BURST_MAX);
}


static void
test_degenerate_limits(void **state)
{
    int                i;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    (void) state;

    /* burst 1: one request per interval, never two at once */

    memset(&st, 0, sizeof(st));

    for (i = 0; i < 10; i++) {
        cms_gcra_check(&st, i * 100, 1, 100, &res);
        assert_true(res.allowed);
        assert_int_equal(res.remaining, 0);
        assert_int_equal(res.reset_after_ms, 100);

        cms_gcra_check(&st, i * 100 + 99, 1, 100, &res);
        assert_false(res.allowed);
        assert_int_equal(res.retry_after_ms, 1);
    }

    /* burst 0 or negative and interval 0 count as 1 */

    memset(&st, 0, sizeof(st));
    cms_gcra_check(&st, 5, 0, 0, &res);
    assert_true(res.allowed);
    assert_int_equal(res.reset_after_ms, 1);

    cms_gcra_check(&st, 5, -3, -1, &res);
    assert_false(res.allowed);
    assert_int_equal(res.retry_after_ms, 1);

    cms_gcra_check(&st, 6, -3, -1, &res);
    assert_true(res.allowed);
}


/* the keyed table: a slot collision never resets a drained bucket */

static int
table_drain(cms_gcra_slot_t *slots, size_t n, uint64_t key, int64_t now)
{
    int                i;
    cms_gcra_result_t  res;

    for (i = 0; i < 10 * B; i++) {
        cms_gcra_table_check(slots, n, key, now, B, T, &res);

        if (!res.allowed) {
            return i;
        }
    }

    return i;
}


static void
test_table_collision(void **state)
{
    int                round;
    uint64_t           k;
    cms_gcra_slot_t    slots[4 * CMS_GCRA_WAYS];
    cms_gcra_result_t  res;

    (void) state;

    memset(slots, 0, sizeof(slots));

    /* 1 and 5 fall in the same set of four: each keeps its own bucket */

    assert_int_equal(table_drain(slots, 32, 1, 1000), B);
    assert_int_equal(table_drain(slots, 32, 5, 1000), B);

    /* taking turns does not give either one a fresh bucket */

    for (round = 0; round < 5; round++) {
        cms_gcra_table_check(slots, 32, 1, 1000, B, T, &res);
        assert_false(res.allowed);
        assert_int_equal(res.retry_after_ms, T);

        cms_gcra_table_check(slots, 32, 5, 1000, B, T, &res);
        assert_false(res.allowed);
    }

    /* one token each after an interval, not a burst */

    cms_gcra_table_check(slots, 32, 1, 1000 + T, B, T, &res);
    assert_true(res.allowed);
    assert_int_equal(res.remaining, 0);
    cms_gcra_table_check(slots, 32, 5, 1000 + T, B, T, &res);
    assert_true(res.allowed);
    assert_int_equal(res.remaining, 0);

    /* another set is untouched */

    for (k = 2; k <= 4; k++) {
        cms_gcra_table_check(slots, 32, k, 1000, B, T, &res);
        assert_true(res.allowed);
        assert_int_equal(res.remaining, B - 1);
    }
}


static void
test_table_full_set(void **state)
{
    uint64_t           k;
    cms_gcra_slot_t    slots[CMS_GCRA_WAYS];
    cms_gcra_result_t  res;

    (void) state;

    memset(slots, 0, sizeof(slots));

    /* every slot of the one set holds a drained bucket */

    for (k = 1; k <= CMS_GCRA_WAYS; k++) {
        assert_int_equal(table_drain(slots, CMS_GCRA_WAYS, k, 0), B);
    }

    /* a new key shares one: refused, not handed a fresh bucket */

    cms_gcra_table_check(slots, CMS_GCRA_WAYS, 1000, 0, B, T, &res);
    assert_false(res.allowed);

    /* and the owners are still drained */

    for (k = 1; k <= CMS_GCRA_WAYS; k++) {
        cms_gcra_table_check(slots, CMS_GCRA_WAYS, k, 0, B, T, &res);
        assert_false(res.allowed);
    }

    /* half refilled: the newcomer shares one bucket (the most drained),
       so it gets the tokens that bucket got back, not those of all */

    assert_int_equal(table_drain(slots, CMS_GCRA_WAYS, 1000, B / 2 * T),
                     B / 2);

    /* a bucket full again is the same as none: its slot can be taken */

    cms_gcra_table_check(slots, CMS_GCRA_WAYS, 2000, 10 * B * T, B, T, &res);
    assert_true(res.allowed);
    assert_int_equal(res.remaining, B - 1);
    assert_int_equal(table_drain(slots, CMS_GCRA_WAYS, 2000, 10 * B * T),
                     B - 1);

    /* key 0 is key 1 */

    memset(slots, 0, sizeof(slots));
    assert_int_equal(table_drain(slots, CMS_GCRA_WAYS, 0, 0), B);
    cms_gcra_table_check(slots, CMS_GCRA_WAYS, 1, 0, B, T, &res);
    assert_false(res.allowed);

    /* fewer slots than a set: one set */

    assert_int_equal(table_drain(slots, 0, 7, 0), B);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_steady_state),
        cmocka_unit_test(test_refill),
        cmocka_unit_test(test_remaining_is_exact),
        cmocka_unit_test(test_leaky_bucket_model),
        cmocka_unit_test(test_clock_backwards),
        cmocka_unit_test(test_huge_values),
        cmocka_unit_test(test_degenerate_limits),
        cmocka_unit_test(test_table_collision),
        cmocka_unit_test(test_table_full_set),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
