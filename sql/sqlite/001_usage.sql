-- The usage ledger: one row per model call (src/store/usage_record.h), written once, never
-- updated. record_id makes writes idempotent (INSERT ... ON CONFLICT (record_id) DO NOTHING).
-- Times are unix milliseconds (UTC), timings microseconds (-1 = not measured), money integer
-- micro-units of `currency`. attempts and cost_items are JSON arrays kept as text, byte for
-- byte as written.
CREATE TABLE usage_records (
  id INTEGER PRIMARY KEY,
  record_id TEXT NOT NULL UNIQUE CHECK (record_id <> ''),
  request_id TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL,
  ended_at_ms INTEGER NOT NULL,
  key_name TEXT NOT NULL,
  key_group TEXT NOT NULL,
  tenant TEXT NOT NULL,
  feature TEXT NOT NULL,
  ingress TEXT NOT NULL,
  operation TEXT NOT NULL,
  alias TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
  usage_reported INTEGER NOT NULL CHECK (usage_reported IN (0, 1)),
  input_tokens INTEGER NOT NULL CHECK (input_tokens >= 0),
  output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0),
  cache_read_tokens INTEGER NOT NULL CHECK (cache_read_tokens >= 0),
  cache_write_tokens INTEGER NOT NULL CHECK (cache_write_tokens >= 0),
  reasoning_tokens INTEGER NOT NULL CHECK (reasoning_tokens >= 0),
  status INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  error_class TEXT NOT NULL,
  finish_reason TEXT NOT NULL,
  attempts TEXT NOT NULL,
  total_us INTEGER NOT NULL,
  overhead_us INTEGER NOT NULL,
  queue_us INTEGER NOT NULL,
  upstream_ttfb_us INTEGER NOT NULL,
  ttft_us INTEGER NOT NULL,
  output_tokens_per_s_milli INTEGER NOT NULL,
  priced INTEGER NOT NULL CHECK (priced IN (0, 1)),
  price_version TEXT NOT NULL,
  currency TEXT NOT NULL,
  cost_micros INTEGER NOT NULL,
  cost_items TEXT NOT NULL
) STRICT;

-- Queries filter on a time range, usually with a key, key group, model or feature.
CREATE INDEX usage_records_started ON usage_records (started_at_ms);
CREATE INDEX usage_records_key ON usage_records (key_name, started_at_ms);
CREATE INDEX usage_records_key_group ON usage_records (key_group, started_at_ms);
CREATE INDEX usage_records_model ON usage_records (model, started_at_ms);
CREATE INDEX usage_records_feature ON usage_records (feature, started_at_ms);
-- `sluice usage show REQUEST_ID`.
CREATE INDEX usage_records_request ON usage_records (request_id);
