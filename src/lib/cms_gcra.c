
/*
 * GCRA rate limiting; see cms_gcra.h.  Keep in step with CMS_GCRA_LUA.
 */


#include "cms_gcra.h"


static int64_t cms_gcra_clamp(int64_t v, int64_t lo, int64_t hi);
static cms_gcra_slot_t *cms_gcra_table_slot(cms_gcra_slot_t *set,
    uint64_t key, int64_t now);


/*
 * Decides one request at now_ms against the bucket in st (burst tokens,
 * one more every interval_ms) and updates st when it is accepted (or
 * when the clock went back, see below).  Fills every field of res.
 * Out-of-range arguments are clamped (see the header): burst and
 * interval_ms to 1 .. 2^30, now_ms to 0 .. 2^61, st->tat_ms to 0 .. 2^62.
 *
 * Overflow: full <= 2^60, now <= 2^61 and tat <= 2^62, so no sum below
 * leaves int64_t.
 */

void
cms_gcra_check(cms_gcra_state_t *st, int64_t now_ms, int64_t burst,
    int64_t interval_ms, cms_gcra_result_t *res)
{
    int64_t  t, now, tat, full, d;

    t = cms_gcra_clamp(interval_ms, 1, CMS_GCRA_INTERVAL_MAX);
    full = t * cms_gcra_clamp(burst, 1, CMS_GCRA_BURST_MAX);
    now = cms_gcra_clamp(now_ms, 0, CMS_GCRA_TIME_MAX);
    tat = cms_gcra_clamp(st->tat_ms, 0, 2 * CMS_GCRA_TIME_MAX);

    /*
     * The clock went back further than the state spans: the state is
     * anchored again on the new clock as an empty bucket and kept, so the
     * wait is T, not the length of the step, and nothing more than the
     * rate gets through.  A smaller step back only adds its length to the
     * debt (at most full).
     */

    if (now < tat - full) {
        tat = now + full;
        st->tat_ms = tat;
    }

    if (tat < now) {
        tat = now;
    }

    d = tat - now;                          /* 0 .. full */

    if (d > full - t) {
        res->allowed = 0;
        res->remaining = 0;
        res->retry_after_ms = d - (full - t);
        res->reset_after_ms = d;
        return;
    }

    st->tat_ms = tat + t;
    d += t;

    res->allowed = 1;
    res->remaining = (full - d) / t;
    res->retry_after_ms = 0;
    res->reset_after_ms = d;
}


void
cms_gcra_table_check(cms_gcra_slot_t *slots, size_t nslots, uint64_t key,
    int64_t now_ms, int64_t burst, int64_t interval_ms,
    cms_gcra_result_t *res)
{
    size_t            nsets;
    cms_gcra_slot_t  *slot;

    key = key ? key : 1;
    nsets = nslots / CMS_GCRA_WAYS;
    nsets = nsets ? nsets : 1;

    slot = cms_gcra_table_slot(slots + (key % nsets) * CMS_GCRA_WAYS, key,
                               cms_gcra_clamp(now_ms, 0, CMS_GCRA_TIME_MAX));

    cms_gcra_check(&slot->state, now_ms, burst, interval_ms, res);
}


/*
 * The key's slot in its set: its own, one whose bucket is full again, or
 * else the most drained one, shared.  Sharing the most drained bucket
 * keeps the newcomer on one bucket (accepting only drains it further);
 * sharing the nearest to full would let it take turns on all of them.
 */
static cms_gcra_slot_t *
cms_gcra_table_slot(cms_gcra_slot_t *set, uint64_t key, int64_t now)
{
    size_t            i;
    cms_gcra_slot_t  *idle, *most;

    idle = NULL;
    most = &set[0];

    for (i = 0; i < CMS_GCRA_WAYS; i++) {
        if (set[i].key == key) {
            return &set[i];
        }

        if (idle == NULL && (set[i].key == 0 || set[i].state.tat_ms <= now))
        {
            idle = &set[i];
        }

        if (set[i].state.tat_ms > most->state.tat_ms) {
            most = &set[i];
        }
    }

    if (idle != NULL) {
        idle->key = key;
        idle->state.tat_ms = 0;
        return idle;
    }

    return most;
}


static int64_t
cms_gcra_clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}
