-- What SQLite keeps with row triggers (migrations/0005, 0007, 0008), kept here
-- by statement triggers over transition tables: one aggregated write per
-- statement, in key order, so that concurrent writers lock rollup rows in the
-- same order.

-- A session's row is the sum of its streams, re-aggregated whenever one of
-- them changes. Exact under concurrency because every writer of a session's
-- streams holds that session's advisory lock (the store's writer and retention).
CREATE FUNCTION cachebreak_sync_sessions(keys_project integer[], keys_session text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sessions (project_id, session_id, first_ts, last_ts, turns, measured, unmeasured_input, uncached, read, write, write_1h, output, breaks, missed, extra_cost_micro_usd, unpriced)
  SELECT s.project_id, s.session_id, min(s.first_ts), max(s.last_ts), sum(s.turns), sum(s.measured), sum(s.unmeasured_input), sum(s.uncached), sum(s.read), sum(s.write), sum(s.write_1h), sum(s.output), sum(s.breaks), sum(s.missed), sum(s.extra_cost_micro_usd), sum(s.unpriced)
  FROM streams s JOIN (SELECT DISTINCT * FROM unnest(keys_project, keys_session)) AS k(project_id, session_id)
    ON s.project_id = k.project_id AND s.session_id = k.session_id
  GROUP BY s.project_id, s.session_id
  ORDER BY s.project_id, s.session_id
  ON CONFLICT (project_id, session_id) DO UPDATE SET first_ts = excluded.first_ts, last_ts = excluded.last_ts, turns = excluded.turns,
    measured = excluded.measured, unmeasured_input = excluded.unmeasured_input, uncached = excluded.uncached, read = excluded.read,
    write = excluded.write, write_1h = excluded.write_1h, output = excluded.output, breaks = excluded.breaks, missed = excluded.missed,
    extra_cost_micro_usd = excluded.extra_cost_micro_usd, unpriced = excluded.unpriced;
  DELETE FROM sessions x USING (SELECT DISTINCT * FROM unnest(keys_project, keys_session)) AS k(project_id, session_id)
  WHERE x.project_id = k.project_id AND x.session_id = k.session_id
    AND NOT EXISTS (SELECT 1 FROM streams s WHERE s.project_id = k.project_id AND s.session_id = k.session_id);
END $$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_streams_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cachebreak_sync_sessions(array(SELECT project_id FROM new_rows), array(SELECT session_id FROM new_rows));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_streams_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cachebreak_sync_sessions(array(SELECT project_id FROM old_rows), array(SELECT session_id FROM old_rows));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER streams_sessions_insert AFTER INSERT ON streams REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_streams_inserted();
--> statement-breakpoint
CREATE TRIGGER streams_sessions_update AFTER UPDATE ON streams REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_streams_changed();
--> statement-breakpoint
CREATE TRIGGER streams_sessions_delete AFTER DELETE ON streams REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_streams_changed();
--> statement-breakpoint

-- Break rollups: what each break statement removed (old rows) and added (new
-- rows), grouped per rollup key.

-- Dollars to micro-dollars exactly as SQLite's CAST(round(x * 1000000) AS INTEGER)
-- computes it (in double precision, half away from zero): both stores hold the same sums.
CREATE FUNCTION cachebreak_micro_usd(usd double precision) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT (sign(coalesce(usd, 0) * 1000000) * floor(abs(coalesce(usd, 0) * 1000000) + 0.5))::bigint
$$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_break_rollups(change jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH d AS (
    SELECT (r->>'project_id')::integer AS project_id, (r->>'ts')::bigint / 60000 AS minute, (r->>'model_id')::integer AS model_id,
           (r->>'provider_id')::integer AS provider_id, (r->>'agent_id')::integer AS agent_id, r->>'reason' AS reason,
           coalesce(r->>'cause', '') AS cause, (r->>'sign')::integer AS sign, coalesce((r->>'missed')::bigint, 0) AS missed,
           cachebreak_micro_usd((r->>'extra_cost_usd')::double precision) AS micro_usd,
           CASE WHEN r->'extra_cost_usd' IS NULL OR r->'extra_cost_usd' = 'null'::jsonb THEN 1 ELSE 0 END AS unpriced
    FROM jsonb_array_elements(change) AS r
  )
  INSERT INTO break_cause_rollups (project_id, minute, model_id, provider_id, agent_id, reason, cause, breaks, missed, extra_cost_micro_usd, unpriced)
  SELECT project_id, minute, model_id, provider_id, agent_id, reason, cause, sum(sign), sum(sign * missed), sum(sign * micro_usd), sum(sign * unpriced)
  FROM d GROUP BY 1, 2, 3, 4, 5, 6, 7
  HAVING sum(sign) <> 0 OR sum(sign * missed) <> 0 OR sum(sign * micro_usd) <> 0 OR sum(sign * unpriced) <> 0
  ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (project_id, minute, model_id, provider_id, agent_id, reason, cause) DO UPDATE SET
    breaks = break_cause_rollups.breaks + excluded.breaks, missed = break_cause_rollups.missed + excluded.missed,
    extra_cost_micro_usd = break_cause_rollups.extra_cost_micro_usd + excluded.extra_cost_micro_usd,
    unpriced = break_cause_rollups.unpriced + excluded.unpriced;

  INSERT INTO break_tool_rollups (project_id, minute, model_id, provider_id, agent_id, reason, tool, breaks)
  SELECT (r->>'project_id')::integer, (r->>'ts')::bigint / 60000, (r->>'model_id')::integer, (r->>'provider_id')::integer,
         (r->>'agent_id')::integer, r->>'reason', tool, sum((r->>'sign')::integer)
  FROM jsonb_array_elements(change) AS r,
       jsonb_array_elements_text(CASE WHEN jsonb_typeof(r->'changed_tools') = 'array' THEN r->'changed_tools' ELSE '[]'::jsonb END) AS tool
  GROUP BY 1, 2, 3, 4, 5, 6, 7
  HAVING sum((r->>'sign')::integer) <> 0
  ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (project_id, minute, model_id, provider_id, agent_id, reason, tool) DO UPDATE SET breaks = break_tool_rollups.breaks + excluded.breaks;
END $$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_break_delta(b breaks, sign integer) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('project_id', b.project_id, 'ts', b.ts, 'model_id', b.model_id, 'provider_id', b.provider_id,
    'agent_id', b.agent_id, 'reason', b.reason, 'cause', b.cause, 'missed', b.missed, 'extra_cost_usd', b.extra_cost_usd,
    'changed_tools', b.changed_tools, 'sign', sign)
$$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_breaks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cachebreak_break_rollups((SELECT coalesce(jsonb_agg(cachebreak_break_delta(n, 1)), '[]') FROM new_rows n));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_breaks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cachebreak_break_rollups((SELECT coalesce(jsonb_agg(x), '[]') FROM (
    SELECT cachebreak_break_delta(o, -1) AS x FROM old_rows o UNION ALL SELECT cachebreak_break_delta(n, 1) FROM new_rows n) AS c));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION cachebreak_breaks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cachebreak_break_rollups((SELECT coalesce(jsonb_agg(cachebreak_break_delta(o, -1)), '[]') FROM old_rows o));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER breaks_rollups_insert AFTER INSERT ON breaks REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_breaks_inserted();
--> statement-breakpoint
CREATE TRIGGER breaks_rollups_update AFTER UPDATE ON breaks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_breaks_updated();
--> statement-breakpoint
CREATE TRIGGER breaks_rollups_delete AFTER DELETE ON breaks REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cachebreak_breaks_deleted();
