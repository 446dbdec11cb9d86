-- The usage ledger in segments (src/store/usage_segment.h): the usage writer stores each batch
-- as one row per started minute, its records encoded one after the other (each string as what
-- it does not share with the record before), instead of one row per record with an entry in
-- three indexes. That row and those entries were most of the usage writer's cost (about 6 us
-- of CPU per record; the segments' whole path about 1.3), and at c=64 the writer shares the
-- gateway's cores. Reports read usage_rollup for whole minutes and decode the segments of the
-- minutes at a range's two ends; `sluice usage show REQUEST_ID` searches the segments' bytes
-- for the id; `sluice usage export` prints the records.
-- SqliteStore::migrate moves the records of usage_records into segments after this script, in
-- the same transaction, then drops usage_records (a record cannot be encoded in SQL).

-- The field lists segments were written with ("record_id:s,request_id:s,...").
CREATE TABLE usage_segment_layouts (
  id INTEGER PRIMARY KEY,
  fields TEXT NOT NULL UNIQUE
) STRICT;

-- bucket_ms = the records' started_at_ms floored to the minute, as usage_rollup's.
CREATE TABLE usage_segments (
  id INTEGER PRIMARY KEY,
  layout INTEGER NOT NULL REFERENCES usage_segment_layouts (id),
  bucket_ms INTEGER NOT NULL,
  records INTEGER NOT NULL CHECK (records > 0),
  body BLOB NOT NULL
) STRICT;
CREATE INDEX usage_segments_bucket ON usage_segments (bucket_ms);

-- Which record ids are stored, as runs of consecutive sequences per prefix (split_record_id):
-- a replayed record whose id falls in a run is skipped. Runs of one prefix never overlap; the
-- writer joins a run to its neighbours, so a gateway instance's worker keeps one run for as
-- long as none of its records is lost.
CREATE TABLE usage_record_runs (
  prefix TEXT NOT NULL,
  first_sequence INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL CHECK (last_sequence >= first_sequence),
  PRIMARY KEY (prefix, first_sequence)
) STRICT, WITHOUT ROWID;
