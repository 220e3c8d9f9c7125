-- The search bench's workspace (bench/run.sh, search_bench): :n articles of about 2 KB in
-- workspace :'ws', their text drawn from a vocabulary of 20,000 made-up words with a
-- log-uniform skew (word k about 1/k as likely as the first: a few words are in every
-- article, most in a few hundred), three paragraphs of 2,000 each, as a live site's text
-- repeats its words. The two search indexes are built after the rows (as CREATE INDEX on
-- a loaded table, not row by row); the trigger makes each row's vector as a write would.
SELECT setseed(0.37);          -- the same text every run: the rows' match counts stay
CREATE TEMP TABLE vocab AS
    SELECT array_agg(translate(substr(md5(k::text), 1, 4 + k % 6), '0123456789',
                               'ghijklmnop') ORDER BY k) AS ws
      FROM generate_series(0, 19999) k;
CREATE TEMP TABLE para AS
    SELECT p, (SELECT string_agg(v.ws[1 + (floor(exp(ln(20000) * random()))::int + i * 0)
                                      % 20000], ' ')
                 FROM generate_series(1, 90 + p * 0) i) AS t
      FROM generate_series(0, 1999) p, vocab v;
DROP INDEX IF EXISTS articles_search_idx;
DROP INDEX IF EXISTS articles_title_trgm_idx;
INSERT INTO articles (workspace_id, title, slug, body, status, locale, published_at,
                      created_at)
SELECT :'ws', initcap(v.ws[1 + (g * 7919) % 20000]) || ' ' || v.ws[1 + (g * 104729) % 20000]
              || ' report ' || g,
       'search-' || g,
       '<p>' || p1.t || '</p><p>' || p2.t || '</p><p>' || p3.t || '</p>',
       'published', 'en', now(), now() - g * interval '1 second'
  FROM generate_series(1, :n::bigint) g CROSS JOIN vocab v
  JOIN para p1 ON p1.p = (g * 31) % 2000
  JOIN para p2 ON p2.p = (g * 17 + 5) % 2000
  JOIN para p3 ON p3.p = (g * 13 + 11) % 2000;
CREATE INDEX articles_search_idx ON articles USING gin (workspace_id, locale, search)
    WHERE deleted_at IS NULL;
CREATE INDEX articles_title_trgm_idx
    ON articles USING gin (workspace_id, locale, title gin_trgm_ops) WHERE deleted_at IS NULL;
VACUUM ANALYZE articles;
-- the words the rows query: one in every article, one in about 1,500, one in a few
SELECT ws[2] || ' ' || ws[3001] || ' ' || ws[1] FROM vocab;
