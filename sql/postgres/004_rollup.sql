-- Usage per minute and dimension tuple: what `sluice usage` and the admin usage endpoint read
-- for the whole minutes of a time range (the ledger only for the minutes at its two ends), so a
-- report does not scan the ledger and the ledger needs no per-dimension index. Those four
-- indexes go: they cost the usage writer about a third of its time per record. The writer adds
-- to this table in the same transaction as the records, only for records actually inserted (a
-- replayed record_id adds nothing).
-- bucket_ms = started_at_ms floored to the minute; failed = outcome upstream_error or
-- midstream_error; cost_micros sums priced records only, unaccounted counts the others.
CREATE TABLE usage_rollup (
  bucket_ms BIGINT NOT NULL,
  key_name TEXT NOT NULL,
  key_group TEXT NOT NULL,
  tenant TEXT NOT NULL,
  feature TEXT NOT NULL,
  alias TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  outcome TEXT NOT NULL,
  requests BIGINT NOT NULL,
  failed BIGINT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  cache_read_tokens BIGINT NOT NULL,
  cache_write_tokens BIGINT NOT NULL,
  reasoning_tokens BIGINT NOT NULL,
  cost_micros BIGINT NOT NULL,
  unaccounted BIGINT NOT NULL,
  PRIMARY KEY (bucket_ms, key_name, key_group, tenant, feature, alias, provider, model, outcome)
);

-- A report for one key, key group, model or feature over a long range reads its rows only.
CREATE INDEX usage_rollup_key ON usage_rollup (key_name, bucket_ms);
CREATE INDEX usage_rollup_key_group ON usage_rollup (key_group, bucket_ms);
CREATE INDEX usage_rollup_model ON usage_rollup (model, bucket_ms);
CREATE INDEX usage_rollup_feature ON usage_rollup (feature, bucket_ms);

INSERT INTO usage_rollup
SELECT started_at_ms - ((started_at_ms % 60000) + 60000) % 60000,
       key_name, key_group, tenant, feature, alias, provider, model, outcome,
       COUNT(*),
       SUM(CASE WHEN outcome IN ('upstream_error', 'midstream_error') THEN 1 ELSE 0 END),
       SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens),
       SUM(reasoning_tokens),
       SUM(CASE WHEN priced THEN cost_micros ELSE 0 END),
       SUM(CASE WHEN priced THEN 0 ELSE 1 END)
FROM usage_records
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;

DROP INDEX usage_records_key;
DROP INDEX usage_records_key_group;
DROP INDEX usage_records_model;
DROP INDEX usage_records_feature;
