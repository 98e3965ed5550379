-- Which conductor replica drives a turn (its conductor_leases owner id). A turn is live in that replica's memory,
-- and between its runs (before the first one exists, while the next one starts) no running run shows it is driven:
-- another replica ends the turn as abandoned only when this owner's lease has lapsed. NULL for turns from before.
ALTER TABLE agent_turns ADD COLUMN owner_id text;
