"""The service store's tables, one text for SQLite and Postgres: ``{real}`` is the
backend's 8-byte float type (Postgres' REAL has 4 bytes). ``store_migrate`` brings a store
of an earlier release up to these tables; ``INDEXES`` run after it."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    key_id TEXT,
    user_id TEXT NOT NULL,
    conversation_id TEXT,
    question TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    record TEXT,
    owner TEXT,
    lease_until {real} NOT NULL DEFAULT 0,
    created {real} NOT NULL,
    updated {real} NOT NULL,
    tenant TEXT NOT NULL DEFAULT 'default',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    review_plan TEXT NOT NULL DEFAULT 'off'
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS idempotency (
    key_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created {real} NOT NULL,
    PRIMARY KEY (key_id, key)
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    modules TEXT NOT NULL,
    rate_per_min INTEGER NOT NULL,
    max_concurrent INTEGER NOT NULL,
    created {real} NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    tenant TEXT NOT NULL DEFAULT 'default',
    merchants TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS user_memory (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    core TEXT NOT NULL,
    notes TEXT NOT NULL,
    updated {real} NOT NULL,
    PRIMARY KEY (tenant, user_id)
)
"""

INDEXES = """
CREATE INDEX IF NOT EXISTS runs_status ON runs(status, key_id);
CREATE INDEX IF NOT EXISTS runs_tenant_conversation ON runs(tenant, conversation_id, created);
CREATE INDEX IF NOT EXISTS runs_tenant_created ON runs(tenant, created, id)
"""
