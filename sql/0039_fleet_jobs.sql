-- The periodic jobs of a fleet (docs/fleet.md, "Periodic jobs across hosts").
--
-- Every host's worker 0 asks for due scheduled articles each second: the
-- scan skipped the rows already announced, whose number grows with history
-- (articles stay 'scheduled' after their time), so its index leaves them
-- out.  Its predicate names no column an ordinary edit changes (not
-- updated_at), so that edits stay heap-only updates.
--
-- A job that gains nothing from running on every host (a bucket's
-- listing for orphans) takes a turn first: the first host to ask once the
-- turn is due runs it, the others skip until the next.  A host that dies
-- mid-pass loses that turn; the next comes one interval later.
BEGIN;

CREATE INDEX articles_announce_due_idx ON articles (published_at)
    WHERE status = 'scheduled' AND deleted_at IS NULL
      AND announced_for IS DISTINCT FROM published_at;

CREATE TABLE job_turns (
    job                text PRIMARY KEY,
    next_at            timestamptz NOT NULL
);

-- true for the one caller whose turn it is: the next turn comes 90 % of
-- p_every later, so that hosts ticking every p_every keep that pace
CREATE FUNCTION cms_job_turn(p_job text, p_every interval) RETURNS boolean
    LANGUAGE sql
    AS $$
    WITH taken AS (
        INSERT INTO job_turns AS t (job, next_at)
             VALUES (p_job, now() + p_every * 0.9)
        ON CONFLICT (job) DO UPDATE SET next_at = excluded.next_at
             WHERE t.next_at <= now()
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM taken) $$;

COMMIT;
