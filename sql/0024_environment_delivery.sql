-- A hosted environment's files reach its session's sandbox before the session's next turn: `delivered` says whether
-- this version of the file is there. Files an environment was created with were copied in with their session (their
-- rows share the environment's creation time); files added later were not, so they go in at the next turn.
-- `sandbox_mark` is what the sandbox holds once it is set up (in its /home): a sandbox without it has lost its disk
-- (a fresh runner) and is restored before the next turn. Null for environments from before: marked at their next turn.
SELECT set_config('app.system', 'on', true);
ALTER TABLE agent_environment_files ADD COLUMN delivered boolean NOT NULL DEFAULT true;
UPDATE agent_environment_files f SET delivered = false FROM agent_environments e WHERE e.id = f.environment_id AND f.updated_at > e.created_at;
ALTER TABLE agent_environment_files ALTER COLUMN delivered SET DEFAULT false;
ALTER TABLE agent_environments ADD COLUMN sandbox_mark text;
