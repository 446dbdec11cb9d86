-- What the guardrails found and did for a request ("pii/email:redact=2"; docs/guardrails.md):
-- counts per policy, detector and action, never a matched text; '' for records before this
-- migration and for requests with nothing found.
ALTER TABLE usage_records ADD COLUMN guardrails TEXT NOT NULL DEFAULT '';
