-- Which feature started a run ('automation', 'workflow'; null for a run asked for directly through the API). The
-- runFinished hook queues a subscriber's job only for the origins it asked for (run-hooks.ts), so a plain run does not
-- pay a job per feature that would find nothing to do with it.
ALTER TABLE runs ADD COLUMN origin text;
