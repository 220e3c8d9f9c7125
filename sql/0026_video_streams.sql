-- Videos created at the video provider (cms_video_provider) through
-- POST /v1/workspaces/{id}/videos/upload-credentials: which workspace each
-- provider video belongs to, so that a status poll answers only the
-- workspace that created it (the provider's library is shared by every
-- workspace of the server), and its last polled state.  The poll also
-- keeps status and duration on the workspace's video rows naming the
-- stream (videos.stream_video_id, found through videos_stream_idx).
BEGIN;

CREATE TABLE video_streams (
    library_id        text NOT NULL,
    stream_video_id   text NOT NULL,
    workspace_id      uuid NOT NULL REFERENCES workspaces (id)
                      ON DELETE CASCADE,
    title             text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    created_by        uuid REFERENCES users (id) ON DELETE SET NULL,
    stream_status     text CHECK (stream_status IN ('pending', 'uploading',
                                                    'processing', 'ready',
                                                    'failed')),
    duration_seconds  double precision CHECK (duration_seconds >= 0),
    polled_at         timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (library_id, stream_video_id)
);

CREATE INDEX video_streams_workspace_idx
    ON video_streams (workspace_id, created_at DESC);

CREATE INDEX videos_stream_idx
    ON videos (workspace_id, stream_video_id)
    WHERE stream_video_id IS NOT NULL;

COMMIT;
