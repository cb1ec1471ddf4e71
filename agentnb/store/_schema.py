"""The run store's SQL schema: one version number, and the steps that reach it, for each backend.

A new database runs every step from 1; an older one runs the steps past its version, in one transaction.
To change the schema, add the next step to :data:`MIGRATIONS` with SQL for both SQLite and PostgreSQL and bump
:data:`SCHEMA_VERSION`; never edit a step that has shipped. A database written by a newer agentnb is refused
rather than guessed at.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "VERSION_TABLE", "Migration"]

SCHEMA_VERSION = 7


class Migration(NamedTuple):
    """One schema step: statements separated by ``;`` for each backend."""

    sqlite: str
    postgresql: str

    def statements(self, backend: str) -> list[str]:
        """The step's statements for ``backend`` (``"sqlite"`` or ``"postgresql"``).

        A ``;`` inside ``$$ ... $$`` (a PostgreSQL function body) does not end a statement.
        """
        text = self.sqlite if backend == "sqlite" else self.postgresql
        statements: list[str] = []
        current = ""
        for i, chunk in enumerate(text.split("$$")):
            if i % 2:  # inside a dollar-quoted body
                current += f"$${chunk}$$"
                continue
            first, *rest = chunk.split(";")
            if rest:
                statements.append(current + first)
                *done, current = rest
                statements.extend(done)
            else:
                current += first
        statements.append(current)
        return [part.strip() for part in statements if part.strip()]


VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"

# Times of runs, events, checkpoints and sessions are fixed-width ISO 8601 UTC strings, so text order is
# time order; span times are integer nanoseconds since the epoch, as OpenTelemetry records them, because
# spans are many and turning integers into pandas datetimes is much cheaper than parsing strings.
_V1_SQLITE = """
CREATE TABLE IF NOT EXISTS runs (
    run_id     TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT,
    metadata   TEXT NOT NULL DEFAULT '{}',
    rev        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at);
CREATE INDEX IF NOT EXISTS runs_rev ON runs (rev);

CREATE TABLE IF NOT EXISTS events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    executor_id TEXT,
    timestamp   TEXT NOT NULL,
    data        TEXT NOT NULL DEFAULT 'null',
    UNIQUE (run_id, seq)
);

CREATE TABLE IF NOT EXISTS spans (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    trace_id       TEXT NOT NULL,
    span_id        TEXT NOT NULL,
    parent_id      TEXT,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL DEFAULT 'INTERNAL',
    start_ns       INTEGER NOT NULL,
    end_ns         INTEGER,
    status_code    TEXT NOT NULL DEFAULT 'UNSET',
    status_message TEXT,
    operation      TEXT,
    agent_name     TEXT,
    model          TEXT,
    tool_name      TEXT,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    run_id         TEXT,
    attributes     TEXT NOT NULL DEFAULT '{}',
    events         TEXT NOT NULL DEFAULT '[]',
    resource       TEXT NOT NULL DEFAULT '{}',
    UNIQUE (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id);
CREATE INDEX IF NOT EXISTS spans_start ON spans (start_ns);
CREATE INDEX IF NOT EXISTS spans_agent ON spans (agent_name);
CREATE INDEX IF NOT EXISTS spans_run ON spans (run_id);

CREATE TABLE IF NOT EXISTS checkpoints (
    checkpoint_id TEXT PRIMARY KEY,
    run_id        TEXT,
    workflow_name TEXT,
    parent_id     TEXT,
    step          INTEGER,
    created_at    TEXT NOT NULL,
    data          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS checkpoints_run ON checkpoints (run_id, created_at);
CREATE INDEX IF NOT EXISTS checkpoints_workflow ON checkpoints (workflow_name, created_at);

CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
);
"""

# The same tables in PostgreSQL: 64-bit integers for ids and nanoseconds, and a serial ``seq`` on
# checkpoints that stands in for SQLite's rowid (insertion order among equal times).
_V1_POSTGRESQL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id     TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT,
    metadata   TEXT NOT NULL DEFAULT '{}',
    rev        BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at);
CREATE INDEX IF NOT EXISTS runs_rev ON runs (rev);

CREATE TABLE IF NOT EXISTS events (
    id          BIGSERIAL PRIMARY KEY,
    run_id      TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    type        TEXT NOT NULL,
    executor_id TEXT,
    timestamp   TEXT NOT NULL,
    data        TEXT NOT NULL DEFAULT 'null',
    UNIQUE (run_id, seq)
);

CREATE TABLE IF NOT EXISTS spans (
    id             BIGSERIAL PRIMARY KEY,
    trace_id       TEXT NOT NULL,
    span_id        TEXT NOT NULL,
    parent_id      TEXT,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL DEFAULT 'INTERNAL',
    start_ns       BIGINT NOT NULL,
    end_ns         BIGINT,
    status_code    TEXT NOT NULL DEFAULT 'UNSET',
    status_message TEXT,
    operation      TEXT,
    agent_name     TEXT,
    model          TEXT,
    tool_name      TEXT,
    input_tokens   BIGINT,
    output_tokens  BIGINT,
    run_id         TEXT,
    attributes     TEXT NOT NULL DEFAULT '{}',
    events         TEXT NOT NULL DEFAULT '[]',
    resource       TEXT NOT NULL DEFAULT '{}',
    UNIQUE (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id);
CREATE INDEX IF NOT EXISTS spans_start ON spans (start_ns);
CREATE INDEX IF NOT EXISTS spans_agent ON spans (agent_name);
CREATE INDEX IF NOT EXISTS spans_run ON spans (run_id);

CREATE TABLE IF NOT EXISTS checkpoints (
    checkpoint_id TEXT PRIMARY KEY,
    run_id        TEXT,
    workflow_name TEXT,
    parent_id     TEXT,
    step          BIGINT,
    created_at    TEXT NOT NULL,
    data          TEXT NOT NULL,
    seq           BIGSERIAL
);
CREATE INDEX IF NOT EXISTS checkpoints_run ON checkpoints (run_id, created_at);
CREATE INDEX IF NOT EXISTS checkpoints_workflow ON checkpoints (workflow_name, created_at);

CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    updated_at TEXT NOT NULL,
    data       TEXT NOT NULL
)
"""

# One row per trace, kept up to date by every span write: listing the latest traces reads an index of this
# table instead of grouping every stored span. The spans' UNIQUE (trace_id, span_id) already serves lookups
# by trace, so the separate trace index goes.
_V2 = """
CREATE TABLE IF NOT EXISTS traces (
    trace_id   TEXT PRIMARY KEY,
    start_ns   {bigint} NOT NULL,
    end_ns     {bigint},
    spans      {bigint} NOT NULL,
    errors     {bigint} NOT NULL,
    root       TEXT,
    agent_name TEXT
);
CREATE INDEX IF NOT EXISTS traces_start ON traces (start_ns);
INSERT INTO traces (trace_id, start_ns, end_ns, spans, errors, root, agent_name)
    SELECT trace_id, MIN(start_ns), MAX(end_ns), COUNT(*), SUM(CASE WHEN status_code = 'ERROR' THEN 1 ELSE 0 END),
           MAX(CASE WHEN parent_id IS NULL THEN name END), MAX(CASE WHEN parent_id IS NULL THEN agent_name END)
    FROM spans GROUP BY trace_id;
DROP INDEX IF EXISTS spans_trace
"""

# Version 3: experiments (named evaluations over a dataset) and their cases, one row per case and repetition.
# A case's ``data`` holds its input, output, expected value, scores and metadata as JSON; the columns beside
# it are what listing, resuming and joining to runs and traces need without parsing it.
_V3 = """
CREATE TABLE IF NOT EXISTS experiments (
    name       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status     TEXT NOT NULL,
    target     TEXT,
    metadata   TEXT NOT NULL DEFAULT '{}',
    rev        {int} NOT NULL
);
CREATE INDEX IF NOT EXISTS experiments_rev ON experiments (rev);

CREATE TABLE IF NOT EXISTS experiment_cases (
    experiment TEXT NOT NULL,
    case_id    TEXT NOT NULL,
    repetition {int} NOT NULL DEFAULT 0,
    position   {int} NOT NULL,
    status     TEXT NOT NULL,
    run_id     TEXT,
    trace_id   TEXT,
    updated_at TEXT NOT NULL,
    scores     TEXT NOT NULL DEFAULT '{}',
    data       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (experiment, case_id, repetition)
)
"""

# Version 4 (PostgreSQL): every write to a table that viewers follow announces itself on the store's
# LISTEN/NOTIFY channel, whoever writes (any process, any machine), from a statement trigger; a write that is
# one statement then needs no transaction of its own around it. SQLite viewers compare watermarks instead.
_V4_POSTGRESQL = """
CREATE OR REPLACE FUNCTION agentnb_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentnb_store', TG_TABLE_NAME);
    RETURN NULL;
END
$$;
""" + "".join(
    f"CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
    "FOR EACH STATEMENT EXECUTE FUNCTION agentnb_notify();\n"
    for table in ("runs", "events", "spans", "checkpoints", "sessions", "experiments", "experiment_cases")
)

# Version 5 (PostgreSQL): the server keeps the ``traces`` summary itself, from a statement trigger that reads
# the spans each statement really inserted (its transition table: a span stored before, skipped by ON CONFLICT,
# is not in it), so a batch of spans is one COPY straight into ``spans``. The function's search_path is the
# store's schema, whoever inserts. Spans are listed in (start_ns, id) order, which the index now holds.
_V5_POSTGRESQL = """
CREATE OR REPLACE FUNCTION agentnb_summarize_spans() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT
AS $$
BEGIN
    INSERT INTO traces (trace_id, start_ns, end_ns, spans, errors, root, agent_name)
    SELECT trace_id, MIN(start_ns), MAX(end_ns), COUNT(*), SUM(CASE WHEN status_code = 'ERROR' THEN 1 ELSE 0 END),
           MAX(CASE WHEN parent_id IS NULL THEN name END), MAX(CASE WHEN parent_id IS NULL THEN agent_name END)
    FROM inserted_spans GROUP BY trace_id
    ON CONFLICT (trace_id) DO UPDATE SET
        start_ns = LEAST(excluded.start_ns, traces.start_ns),
        end_ns = GREATEST(excluded.end_ns, traces.end_ns),
        spans = traces.spans + excluded.spans,
        errors = traces.errors + excluded.errors,
        root = COALESCE(excluded.root, traces.root),
        agent_name = COALESCE(excluded.agent_name, traces.agent_name);
    RETURN NULL;
END
$$;
CREATE TRIGGER spans_summarize AFTER INSERT ON spans REFERENCING NEW TABLE AS inserted_spans
    FOR EACH STATEMENT EXECUTE FUNCTION agentnb_summarize_spans();
CREATE INDEX IF NOT EXISTS spans_start_id ON spans (start_ns, id);
DROP INDEX IF EXISTS spans_start
"""

# Version 6 (SQLite): spans are keyed by their trace's number, not its 32-character id. Trace ids are random,
# so an index that leads with them takes every span to a random page (the writer dirtied about one index page
# per trace per batch, a third of its time); each trace now gets an increasing ``trace_no`` in ``traces`` the
# first time it is seen, and the spans' UNIQUE (trace_no, span_id) key, which also serves lookups by trace,
# grows at its end like the time index. Span ids are a plain rowid (no AUTOINCREMENT bookkeeping per row);
# ``span_id_floor`` keeps the highest id ever given out while a delete of the newest spans leaves it above
# every stored one, and the writer continues past it, so pollers that read ``id > last`` never miss a span.
# The rebuild keeps every span's id; a span whose trace had no summary row gets one.
_V6_SQLITE_TEMPLATE = """
CREATE TABLE traces_v6 (
    trace_no   INTEGER PRIMARY KEY,
    trace_id   TEXT NOT NULL UNIQUE,
    start_ns   INTEGER NOT NULL,
    end_ns     INTEGER,
    spans      INTEGER NOT NULL,
    errors     INTEGER NOT NULL,
    root       TEXT,
    agent_name TEXT
);
INSERT INTO traces_v6 (trace_id, start_ns, end_ns, spans, errors, root, agent_name)
    SELECT trace_id, start_ns, end_ns, spans, errors, root, agent_name FROM traces ORDER BY start_ns, trace_id;
INSERT INTO traces_v6 (trace_id, start_ns, end_ns, spans, errors, root, agent_name)
    SELECT trace_id, MIN(start_ns), MAX(end_ns), COUNT(*), SUM(CASE WHEN status_code = 'ERROR' THEN 1 ELSE 0 END),
           MAX(CASE WHEN parent_id IS NULL THEN name END), MAX(CASE WHEN parent_id IS NULL THEN agent_name END)
    FROM spans WHERE trace_id NOT IN (SELECT trace_id FROM traces_v6) GROUP BY trace_id;
CREATE TABLE spans_v6 (
    id             INTEGER PRIMARY KEY,
    trace_no       INTEGER NOT NULL,
    trace_id       TEXT NOT NULL,
    span_id        TEXT NOT NULL,
    parent_id      TEXT,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL DEFAULT 'INTERNAL',
    start_ns       INTEGER NOT NULL,
    end_ns         INTEGER,
    status_code    TEXT NOT NULL DEFAULT 'UNSET',
    status_message TEXT,
    operation      TEXT,
    agent_name     TEXT,
    model          TEXT,
    tool_name      TEXT,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    run_id         TEXT,
    attributes     TEXT NOT NULL DEFAULT '{}',
    events         TEXT NOT NULL DEFAULT '[]',
    resource       TEXT NOT NULL DEFAULT '{}',
    UNIQUE (trace_no, span_id)
);
INSERT INTO spans_v6 (id, trace_no, {columns})
    SELECT s.id, t.trace_no, {s_columns} FROM spans s JOIN traces_v6 t ON t.trace_id = s.trace_id ORDER BY s.id;
CREATE TABLE IF NOT EXISTS span_id_floor (id INTEGER NOT NULL);
INSERT INTO span_id_floor (id)
    SELECT seq FROM sqlite_sequence WHERE name = 'spans' AND seq > (SELECT COALESCE(MAX(id), 0) FROM spans);
DROP TABLE spans;
DROP TABLE traces;
ALTER TABLE spans_v6 RENAME TO spans;
ALTER TABLE traces_v6 RENAME TO traces;
CREATE INDEX spans_start ON spans (start_ns);
CREATE INDEX spans_agent ON spans (agent_name);
CREATE INDEX spans_run ON spans (run_id);
CREATE INDEX traces_start ON traces (start_ns)
"""
_SPAN_DATA_COLUMNS = (
    "trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status_code, status_message, operation, "
    "agent_name, model, tool_name, input_tokens, output_tokens, run_id, attributes, events, resource"
)
_V6_SQLITE = _V6_SQLITE_TEMPLATE.replace("{columns}", _SPAN_DATA_COLUMNS).replace(
    "{s_columns}", ", ".join(f"s.{c.strip()}" for c in _SPAN_DATA_COLUMNS.split(","))
)

# Version 7 (SQLite): the agent and run-id indexes leave out the spans that have none (only workflow spans
# carry a run id), so writing such a span skips them; a query for one agent or one run implies the column is not
# NULL, so it still searches the index. About 0.5 µs less per span written when spans carry no run id.
_V7_SQLITE = """
DROP INDEX IF EXISTS spans_agent;
DROP INDEX IF EXISTS spans_run;
CREATE INDEX spans_agent ON spans (agent_name) WHERE agent_name IS NOT NULL;
CREATE INDEX spans_run ON spans (run_id) WHERE run_id IS NOT NULL
"""

# version -> the step that upgrades a database at ``version - 1`` to ``version`` (1 creates the tables).
MIGRATIONS: dict[int, Migration] = {
    1: Migration(sqlite=_V1_SQLITE, postgresql=_V1_POSTGRESQL),
    2: Migration(sqlite=_V2.format(bigint="INTEGER"), postgresql=_V2.format(bigint="BIGINT")),
    3: Migration(sqlite=_V3.replace("{int}", "INTEGER"), postgresql=_V3.replace("{int}", "BIGINT")),
    4: Migration(sqlite="", postgresql=_V4_POSTGRESQL),
    5: Migration(sqlite="", postgresql=_V5_POSTGRESQL),
    6: Migration(sqlite=_V6_SQLITE, postgresql=""),
    7: Migration(sqlite=_V7_SQLITE, postgresql=""),
}
