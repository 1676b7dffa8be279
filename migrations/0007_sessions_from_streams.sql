-- Keeps each session's row equal to the sum of its streams, whoever changes
-- a stream (the writer's sums and spans, retention's deletes): every change
-- re-aggregates that session's few streams, so the row is exact by
-- construction rather than by deltas.

-- Sessions stored before this table existed.
INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`)
SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`)
  FROM `streams` GROUP BY `project_id`, `session_id`;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_insert` AFTER INSERT ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`)
  FROM `streams` WHERE `project_id` = NEW.`project_id` AND `session_id` = NEW.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`;
END;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_update` AFTER UPDATE ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`)
  FROM `streams` WHERE `project_id` = NEW.`project_id` AND `session_id` = NEW.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`;
END;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_delete` AFTER DELETE ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`)
  FROM `streams` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`;
  DELETE FROM `sessions` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id`
    AND NOT EXISTS (SELECT 1 FROM `streams` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id`);
END;
