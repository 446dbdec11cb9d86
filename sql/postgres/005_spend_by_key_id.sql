-- Budgets count spend by a key's immutable id, not its name: a store key can be renamed (and a
-- name reused), so spend summed by name was lost on a rename (docs/tenancy.md, "Budgets").
-- Each usage record keeps its key's id (records from before this migration have ''), and
-- usage_spend is rebuilt keyed by (bucket, group, key id); its rows from before are attributed
-- to the key that has the name now (a store key of that group, else the config key
-- "config:<name>"), the best the old rows allow.
ALTER TABLE usage_records ADD COLUMN key_id TEXT NOT NULL DEFAULT '';

CREATE TABLE usage_key_spend (
  bucket_ms BIGINT NOT NULL,
  key_group TEXT NOT NULL,
  key_id TEXT NOT NULL,
  cost_micros BIGINT NOT NULL,
  records BIGINT NOT NULL,
  PRIMARY KEY (bucket_ms, key_group, key_id)
);

INSERT INTO usage_key_spend (bucket_ms, key_group, key_id, cost_micros, records)
SELECT s.bucket_ms, s.key_group,
       COALESCE(k.id, CASE WHEN s.key_name = '' THEN '' ELSE 'config:' || s.key_name END),
       SUM(s.cost_micros), SUM(s.records)
FROM usage_spend AS s LEFT JOIN api_keys AS k ON k.name = s.key_name AND k.group_name = s.key_group
GROUP BY 1, 2, 3;

DROP TABLE usage_spend;
ALTER TABLE usage_key_spend RENAME TO usage_spend;
