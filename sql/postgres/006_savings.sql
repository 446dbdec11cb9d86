-- What answers served without an upstream call saved (a cache hit, a coalesced follower, an
-- idempotent replay): the upstream tokens of the call that produced the answer and their cost
-- at the request's prices; 0 for every record before this migration. The rollup sums them for
-- `sluice usage`.
ALTER TABLE usage_records
  ADD COLUMN saved_input_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN saved_output_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN saved_cost_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup
  ADD COLUMN saved_input_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN saved_output_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN saved_cost_micros BIGINT NOT NULL DEFAULT 0;
