-- Key groups, API keys, their audit trail and the answers to Idempotency-Key requests
-- (src/store/tenancy.h). Rules (allocation sums, alias scopes, status transitions) are checked
-- above the store; the store keeps the rows and the one revision every change bumps.
-- Times are unix milliseconds (UTC), money integer micro-units. Lists are JSON arrays as text.
CREATE TABLE key_groups (
  name TEXT PRIMARY KEY CHECK (name <> ''),
  description TEXT NOT NULL,
  budget_amount_micros BIGINT CHECK (budget_amount_micros IS NULL OR budget_amount_micros > 0),
  budget_period TEXT NOT NULL,
  budget_mode TEXT NOT NULL,
  budget_time_zone TEXT NOT NULL,
  budget_starts_at_ms BIGINT NOT NULL,
  rpm BIGINT NOT NULL CHECK (rpm >= 0),
  tpm BIGINT NOT NULL CHECK (tpm >= 0),
  concurrency BIGINT NOT NULL CHECK (concurrency >= 0),
  allowed_aliases TEXT NOT NULL,
  disabled BOOLEAN NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);

-- The secret is never stored: sha256_hex is what a presented key is looked up by.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY CHECK (id <> ''),
  name TEXT NOT NULL UNIQUE CHECK (name <> ''),
  group_name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  sha256_hex TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'revoked')),
  expires_at_ms BIGINT,
  allowed_aliases TEXT NOT NULL,
  allocation_micros BIGINT CHECK (allocation_micros IS NULL OR allocation_micros >= 0),
  rpm BIGINT NOT NULL CHECK (rpm >= 0),
  tpm BIGINT NOT NULL CHECK (tpm >= 0),
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX api_keys_group ON api_keys (group_name);

-- One row: bumped by every change, polled by instances to notice one.
CREATE TABLE tenancy_revision (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  revision BIGINT NOT NULL
);
INSERT INTO tenancy_revision (id, revision) VALUES (1, 0);

CREATE TABLE audit_log (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms BIGINT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  before_json TEXT NOT NULL,
  after_json TEXT NOT NULL,
  request_id TEXT NOT NULL
);
CREATE INDEX audit_log_object ON audit_log (object_type, object_id, id);
CREATE INDEX audit_log_at ON audit_log (at_ms);

CREATE TABLE idempotency_keys (
  key TEXT PRIMARY KEY,
  request_sha256 TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at_ms);
