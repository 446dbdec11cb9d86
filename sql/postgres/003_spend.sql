-- Spend per key per quarter hour: what budgets read instead of scanning the ledger (a month is
-- at most 2,976 rows per key, whatever the traffic). The usage writer adds to it in the same
-- transaction as the records, and only for records actually inserted, so a replayed record
-- (ON CONFLICT (record_id) DO NOTHING) adds nothing; unpriced records count with no cost.
-- Quarter hours because every time zone's month starts on one.
-- bucket_ms = started_at_ms / 900000 * 900000; money as in usage_records.
CREATE TABLE usage_spend (
  bucket_ms BIGINT NOT NULL,
  key_group TEXT NOT NULL,
  key_name TEXT NOT NULL,
  cost_micros BIGINT NOT NULL,
  records BIGINT NOT NULL,
  PRIMARY KEY (bucket_ms, key_group, key_name)
);

INSERT INTO usage_spend (bucket_ms, key_group, key_name, cost_micros, records)
SELECT started_at_ms / 900000 * 900000, key_group, key_name,
       SUM(CASE WHEN priced THEN cost_micros ELSE 0 END), COUNT(*)
FROM usage_records
GROUP BY 1, 2, 3;
