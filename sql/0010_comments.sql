-- Comments (threaded, moderated), podcasts (shows and their episodes) and
-- newsletter subscribers.
--
-- An article's comment_count is the number of its approved comments.  Every
-- write that can change it (cms_comment_update() with a status,
-- cms_comment_delete()) first locks the article's row, before any comment
-- row, then changes the comments and writes the count again from a COUNT
-- of the approved ones.  The writers of one article take turns on that
-- lock, and each COUNT runs in a statement that starts after the lock is
-- held (a VOLATILE function takes a fresh snapshot per statement), so it
-- sees every committed change: the counter cannot drift, whatever runs
-- concurrently, and one lock order (article, then comments) leaves no
-- room for a deadlock between two of these writers.  A new comment is
-- always pending: creating one changes no count.
BEGIN;

CREATE TABLE comments (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    article_id    uuid NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    parent_id     uuid,
    -- 1 for a comment on the article, its parent's + 1 for a reply
    depth         integer NOT NULL DEFAULT 1 CHECK (depth BETWEEN 1 AND 8),
    author_name   text NOT NULL CHECK (length(author_name) BETWEEN 1 AND 200),
    author_email  text,
    content       text NOT NULL CHECK (length(content) BETWEEN 1 AND 10000),
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'spam')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (article_id, id),
    -- a reply answers a comment of the same article; it goes with it
    FOREIGN KEY (article_id, parent_id) REFERENCES comments (article_id, id)
        ON DELETE CASCADE
);

CREATE INDEX comments_list_idx
    ON comments (workspace_id, created_at DESC, id DESC);
CREATE INDEX comments_article_idx
    ON comments (article_id, created_at DESC, id DESC);
CREATE INDEX comments_approved_idx ON comments (article_id)
    WHERE status = 'approved';
CREATE INDEX comments_parent_idx ON comments (parent_id)
    WHERE parent_id IS NOT NULL;


-- A comment as the comment.created event carries it (the API's record).
CREATE FUNCTION cms_comment_event(c comments) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT jsonb_build_object(
              'id', c.id, 'article_id', c.article_id,
              'parent_id', c.parent_id, 'author_name', c.author_name,
              'author_email', c.author_email, 'content', c.content,
              'status', c.status, 'created_at', cms_ts(c.created_at)) $$;


-- Writes the article's count of approved comments.  The caller holds the
-- article's row lock (see the top of this file).
CREATE FUNCTION cms_comment_recount(p_article uuid) RETURNS void
    LANGUAGE sql
    AS $$
    UPDATE articles a SET comment_count = n.n
      FROM (SELECT count(*)::integer AS n FROM comments
             WHERE article_id = p_article AND status = 'approved') n
     WHERE a.id = p_article AND a.comment_count <> n.n $$;


-- A new comment, pending, on a live article of the workspace (else
-- "not_found"); a reply's parent must be a comment of the same article
-- ("invalid_field_value", parent_id), at most 8 levels deep.  The
-- comment.created event goes to the outbox in the same transaction.
CREATE FUNCTION cms_comment_create(p_workspace uuid, p_article uuid,
                                   p_parent uuid, p_name text, p_email text,
                                   p_content text)
    RETURNS comments
    LANGUAGE plpgsql
    AS $$
DECLARE
    c comments;
    d integer := 1;
BEGIN
    PERFORM 1 FROM articles
        WHERE id = p_article AND workspace_id = p_workspace
          AND deleted_at IS NULL;
    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;
    IF p_parent IS NOT NULL THEN
        SELECT depth + 1 INTO d FROM comments
            WHERE id = p_parent AND article_id = p_article;
        IF NOT FOUND OR d > 8 THEN
            PERFORM cms_raise('invalid_field_value', 'parent_id');
        END IF;
    END IF;
    INSERT INTO comments (workspace_id, article_id, parent_id, depth,
                          author_name, author_email, content)
        VALUES (p_workspace, p_article, p_parent, d, p_name, p_email,
                p_content)
        RETURNING * INTO c;
    INSERT INTO outbox_events (workspace_id, type, data)
        VALUES (p_workspace, 'comment.created', cms_comment_event(c));
    RETURN c;
END $$;


-- The comment p_id of a live article of the workspace, locked, and its
-- article locked first when "count" says the write may move the count.
CREATE FUNCTION cms_comment_lock(p_workspace uuid, p_id uuid, count boolean)
    RETURNS comments
    LANGUAGE plpgsql
    AS $$
DECLARE
    c comments;
    art uuid;
BEGIN
    SELECT c0.article_id INTO art FROM comments c0
        JOIN articles a ON a.id = c0.article_id AND a.deleted_at IS NULL
        WHERE c0.id = p_id AND c0.workspace_id = p_workspace;
    IF NOT FOUND THEN
        PERFORM cms_raise('not_found');
    END IF;
    IF count THEN
        PERFORM 1 FROM articles WHERE id = art FOR NO KEY UPDATE;
    END IF;
    SELECT * INTO c FROM comments WHERE id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        -- deleted (with its thread) while we waited
        PERFORM cms_raise('not_found');
    END IF;
    RETURN c;
END $$;


-- Moderation and edits: p_status and p_content NULL keep what is there.
CREATE FUNCTION cms_comment_update(p_workspace uuid, p_id uuid,
                                   p_status text, p_content text)
    RETURNS comments
    LANGUAGE plpgsql
    AS $$
DECLARE
    c comments;
BEGIN
    c := cms_comment_lock(p_workspace, p_id, p_status IS NOT NULL);
    IF coalesce(p_status, c.status) = c.status
       AND coalesce(p_content, c.content) = c.content
    THEN
        RETURN c;
    END IF;
    UPDATE comments
       SET status = coalesce(p_status, status),
           content = coalesce(p_content, content), updated_at = now()
     WHERE id = p_id
     RETURNING * INTO c;
    IF p_status IS NOT NULL THEN
        PERFORM cms_comment_recount(c.article_id);
    END IF;
    RETURN c;
END $$;


-- Deletes a comment and its replies; raises "not_found" when there is none.
CREATE FUNCTION cms_comment_delete(p_workspace uuid, p_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    c comments;
BEGIN
    c := cms_comment_lock(p_workspace, p_id, true);
    DELETE FROM comments WHERE id = p_id;
    PERFORM cms_comment_recount(c.article_id);
    RETURN true;
END $$;


-- Podcasts: a show is made in the studio; episodes are published into it
-- (the API's POST /podcast-episodes) and served in its RSS feed.
CREATE TABLE podcast_shows (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title         text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    slug          text NOT NULL,
    description   text NOT NULL DEFAULT '',
    image_url     text NOT NULL DEFAULT '',
    link          text NOT NULL DEFAULT '',
    author        text NOT NULL DEFAULT '',
    language      text NOT NULL DEFAULT 'en',
    category      text NOT NULL DEFAULT '',
    explicit      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT podcast_shows_slug_key UNIQUE (workspace_id, slug),
    UNIQUE (workspace_id, id)
);

CREATE INDEX podcast_shows_list_idx
    ON podcast_shows (workspace_id, created_at DESC, id DESC);

CREATE TABLE podcast_episodes (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id      uuid NOT NULL,
    show_id           uuid NOT NULL,
    title             text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    description       text NOT NULL DEFAULT '',
    audio_url         text NOT NULL,
    audio_type        text NOT NULL DEFAULT 'audio/mpeg',
    audio_size_bytes  bigint NOT NULL DEFAULT 0
                      CHECK (audio_size_bytes >= 0),
    duration_seconds  integer CHECK (duration_seconds >= 0),
    episode_number    integer CHECK (episode_number >= 1),
    status            text NOT NULL DEFAULT 'draft'
                      CHECK (status IN ('draft', 'published')),
    published_at      timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    -- a show of the same workspace; deleting the show removes them
    FOREIGN KEY (workspace_id, show_id)
        REFERENCES podcast_shows (workspace_id, id) ON DELETE CASCADE
);

CREATE INDEX podcast_episodes_list_idx
    ON podcast_episodes (workspace_id, created_at DESC, id DESC);
CREATE INDEX podcast_episodes_show_idx
    ON podcast_episodes (show_id, created_at DESC, id DESC);
CREATE INDEX podcast_episodes_feed_idx
    ON podcast_episodes (show_id, published_at DESC, id DESC)
    WHERE status = 'published';

-- RFC 822 dates as RSS wants them ("Dy" and "Mon" are English whatever
-- lc_time says: no TM prefix)
CREATE FUNCTION cms_rfc822(t timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT to_char(t AT TIME ZONE 'UTC',
                         'Dy, DD Mon YYYY HH24:MI:SS "GMT"') $$;


-- Newsletter subscribers, one per address and workspace (compared
-- case-insensitively; the address keeps the case it was first given in).
CREATE TABLE subscribers (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    name          text NOT NULL DEFAULT '',
    status        text NOT NULL DEFAULT 'subscribed'
                  CHECK (status IN ('subscribed', 'unsubscribed')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX subscribers_email_key
    ON subscribers (workspace_id, lower(email));
CREATE INDEX subscribers_list_idx
    ON subscribers (workspace_id, created_at DESC, id DESC);

COMMIT;
