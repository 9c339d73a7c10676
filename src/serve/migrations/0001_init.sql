-- gpufl serve, schema version 1 (docs/SERVE.md explains each table).
-- Applied once, in one transaction with its schema_version row; never
-- edited after release: a change is a new file with the next number.

CREATE TABLE workspaces (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A key is shown once, when made; only its SHA-256 is kept.
CREATE TABLE api_keys (
    id            bigserial PRIMARY KEY,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id),
    key_sha256    bytea NOT NULL UNIQUE,
    prefix        text NOT NULL,           -- the first characters, to tell keys apart in `key list`
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz
);

-- One row per announced session: the facts queries filter on as columns,
-- session.json as the uploader sent it in meta.
CREATE TABLE sessions (
    workspace_id   bigint NOT NULL REFERENCES workspaces (id),
    session_id     text NOT NULL,
    host           text NOT NULL DEFAULT '',
    app            text NOT NULL DEFAULT '',
    job            text NOT NULL DEFAULT '',
    status         text NOT NULL DEFAULT '',
    start_ns       bigint,                 -- session timebase (CLOCK_MONOTONIC of the host)
    start_wall_ns  bigint,                 -- ns since the Unix epoch at start_ns
    end_wall_ns    bigint,
    meta           jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, session_id)
);
CREATE INDEX sessions_app_start ON sessions (workspace_id, app, start_wall_ns);
CREATE INDEX sessions_host ON sessions (workspace_id, host);
CREATE INDEX sessions_job ON sessions (workspace_id, job);

-- One row per event, stored once per place: (workspace, session, channel,
-- seq) is the key every batch is inserted against (ON CONFLICT DO NOTHING).
-- channel: 0 device, 1 scope, 2 system (docs/UPLOAD.md's X-Gpufl-Channel).
-- The columns queries use are taken out of the line; raw is the line.
-- No foreign key to sessions: each batch checks its session once, locking
-- it FOR KEY SHARE in the batch's transaction (src/serve/serve_db.c); a
-- key checked per row took about a quarter more PostgreSQL CPU per event
-- (bench/RESULTS.md), and sessions are never deleted by gpufl serve.
CREATE TABLE events (
    workspace_id  bigint NOT NULL,
    session_id    text NOT NULL,
    channel       smallint NOT NULL,
    seq           bigint NOT NULL,
    type          text NOT NULL,
    ts_ns         bigint NOT NULL,         -- session timebase; the start of an interval
    dur_ns        bigint,                  -- kernels, copies, sets, syncs, scope ends, NVTX ranges
    name          text,                    -- kernel (demangled), scope, NVTX range, metric
    device        integer,
    stream        bigint,
    raw           text NOT NULL,
    PRIMARY KEY (workspace_id, session_id, channel, seq)
);
CREATE INDEX events_type_name ON events (workspace_id, type, name);
