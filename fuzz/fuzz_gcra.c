
/*
 * libFuzzer target for cms_gcra.c.
 *
 * The input picks a burst and an interval, then a sequence of clock moves
 * (forward, still, backward, huge); after each call:
 *
 * - the result is in range: retry_after 1 .. T when refused and 0 when
 *   accepted, remaining 0 .. B - 1, reset_after 0 .. B * T;
 * - while the clock only moves forward, the result equals a leaky bucket
 *   of debt in ms (the other classic formulation of GCRA), written apart;
 * - "remaining" more requests at the same instant are accepted, and the
 *   next one is refused (checked on a copy of the state).
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cms_gcra.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


typedef struct {
    int64_t   level;        /* debt in ms, 0 .. B * T */
    int64_t   last;
    int       valid;        /* the clock has not gone back yet */
} model_t;


static int64_t
next_now(int64_t now, uint8_t op, const uint8_t *arg)
{
    int64_t  v;

    v = (int64_t) arg[0] << 8 | arg[1];

    switch (op % 8) {
    case 0:
        return now;
    case 1:
    case 2:
    case 3:
        return now + v;
    case 4:
        return now + v * 1000;
    case 5:
        return now - v;
    case 6:
        return now - v * 1000000;
    default:
        return (op & 0x80) ? INT64_MAX : INT64_MIN;
    }
}


static void
check_model(model_t *m, int64_t now, int64_t b, int64_t t,
    const cms_gcra_result_t *res)
{
    int  ok;

    if (now < m->last || now < 0 || now > CMS_GCRA_TIME_MAX) {
        m->valid = 0;
    }

    if (!m->valid) {
        return;
    }

    m->level -= now - m->last;
    m->level = m->level < 0 ? 0 : m->level;
    m->last = now;
    ok = m->level + t <= b * t;

    if (ok) {
        m->level += t;
    }

    if (res->allowed != ok || res->reset_after_ms != m->level
        || (!ok && res->retry_after_ms != m->level + t - b * t))
    {
        abort();
    }
}


static void
check_ranges(const cms_gcra_state_t *st, int64_t now, int64_t b, int64_t t,
    const cms_gcra_result_t *res)
{
    int64_t            i;
    cms_gcra_state_t   copy;
    cms_gcra_result_t  r;

    if (res->allowed
        ? (res->retry_after_ms != 0 || res->remaining < 0
           || res->remaining > b - 1)
        : (res->retry_after_ms < 1 || res->retry_after_ms > t
           || res->remaining != 0))
    {
        abort();
    }

    if (res->reset_after_ms < 0 || res->reset_after_ms > b * t) {
        abort();
    }

    copy = *st;

    for (i = 0; i < res->remaining; i++) {
        cms_gcra_check(&copy, now, b, t, &r);

        if (!r.allowed) {
            abort();
        }
    }

    cms_gcra_check(&copy, now, b, t, &r);

    if (r.allowed) {
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t             i;
    int64_t            now, b, t;
    model_t            m;
    cms_gcra_state_t   st;
    cms_gcra_result_t  res;

    if (size < 4) {
        return 0;
    }

    /* small limits, so that the same-instant drain stays cheap */

    b = 1 + data[0] % 64;
    t = 1 + ((int64_t) data[1] << 8 | data[2]);
    now = (int64_t) data[3] << 32;

    st.tat_ms = 0;
    m.level = 0;
    m.last = now;
    m.valid = 1;

    for (i = 4; i + 3 <= size; i += 3) {
        now = next_now(now, data[i], data + i + 1);

        cms_gcra_check(&st, now, b, t, &res);
        check_model(&m, now, b, t, &res);
        check_ranges(&st, now, b, t, &res);

        /* as cms_gcra_check() sees it, so that the next move cannot
         * overflow */

        if (now < 0) {
            now = 0;
        }

        if (now > CMS_GCRA_TIME_MAX) {
            now = CMS_GCRA_TIME_MAX;
        }
    }

    return 0;
}
