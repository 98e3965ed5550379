-- Stored run events are announced to the other replicas by the insert itself: one NOTIFY per run and statement, sent
-- when the writing transaction commits (never for events that did not land). The conductor used to send these as
-- separate autocommit statements after each flush, three per plain run (issue 16).
CREATE FUNCTION svc_announce_run_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_run_events', json_build_object('t', tenant_id, 'r', run_id, 's', max(seq))::text)
    FROM inserted GROUP BY tenant_id, run_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER run_events_announce AFTER INSERT ON run_events REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION svc_announce_run_events();
