-- What answers served without an upstream call saved (a cache hit, a coalesced follower, an
-- idempotent replay): the upstream tokens of the call that produced the answer and their cost
-- at the request's prices. Records carry them as fields of their segments' layout (older
-- segments read them as 0); the rollup sums them for `sluice usage`.
ALTER TABLE usage_rollup ADD COLUMN saved_input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN saved_output_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN saved_cost_micros INTEGER NOT NULL DEFAULT 0;
