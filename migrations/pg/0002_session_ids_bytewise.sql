-- Session ids compare byte-wise, as SQLite compares them, whatever the
-- database's collation: the rankings' indexes (sessions_last_ts, sessions_rate,
-- sessions_cost) then hold sessions in the exact order the reads ask for, and
-- a page is the first rows of an index even where many sessions tie on the
-- ranked value (a cache rate of 0, a cost of 0), instead of a sort of them all.
ALTER TABLE "sessions" ALTER COLUMN "session_id" SET DATA TYPE text COLLATE "C";
