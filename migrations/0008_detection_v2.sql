CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `break_cause_rollups` ADD `unpriced` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `prefixes` ADD `markers` text;--> statement-breakpoint
ALTER TABLE `prefixes` ADD `params` text;--> statement-breakpoint
ALTER TABLE `rollups` ADD `unpriced` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `unpriced` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `streams` ADD `max_flight_ms` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `streams` ADD `unpriced` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `turns` ADD `message_markers` text;--> statement-breakpoint
ALTER TABLE `turns` ADD `ttft_ms` integer;--> statement-breakpoint
ALTER TABLE `turns` ADD `write_reported` integer;--> statement-breakpoint
ALTER TABLE `turns` ADD `tiers` integer;--> statement-breakpoint

-- Detection v2 counts breaks of unpriced models apart (an unknown price is
-- never $0): the triggers that keep sessions and break rollups equal to their
-- sources carry the new column. Breaks stored before are counted once here,
-- so that evaluating them again under v2 subtracts what they added.
UPDATE `rollups` SET `unpriced` = (
  SELECT count(*) FROM `breaks` AS b
  WHERE b.`project_id` = `rollups`.`project_id` AND b.`ts` / 60000 = `rollups`.`minute`
    AND b.`model_id` = `rollups`.`model_id` AND b.`provider_id` = `rollups`.`provider_id`
    AND b.`agent_id` = `rollups`.`agent_id` AND b.`reason` = `rollups`.`reason` AND b.`extra_cost_usd` IS NULL
) WHERE `reason` != '';
--> statement-breakpoint
UPDATE `break_cause_rollups` SET `unpriced` = (
  SELECT count(*) FROM `breaks` AS b
  WHERE b.`project_id` = `break_cause_rollups`.`project_id` AND b.`ts` / 60000 = `break_cause_rollups`.`minute`
    AND b.`model_id` = `break_cause_rollups`.`model_id` AND b.`provider_id` = `break_cause_rollups`.`provider_id`
    AND b.`agent_id` = `break_cause_rollups`.`agent_id` AND b.`reason` = `break_cause_rollups`.`reason`
    AND coalesce(b.`cause`, '') = `break_cause_rollups`.`cause` AND b.`extra_cost_usd` IS NULL
);
--> statement-breakpoint
DROP TRIGGER `streams_sessions_insert`;
--> statement-breakpoint
DROP TRIGGER `streams_sessions_update`;
--> statement-breakpoint
DROP TRIGGER `streams_sessions_delete`;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_insert` AFTER INSERT ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`, `unpriced`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`), sum(`unpriced`)
  FROM `streams` WHERE `project_id` = NEW.`project_id` AND `session_id` = NEW.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`, `unpriced` = excluded.`unpriced`;
END;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_update` AFTER UPDATE ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`, `unpriced`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`), sum(`unpriced`)
  FROM `streams` WHERE `project_id` = NEW.`project_id` AND `session_id` = NEW.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`, `unpriced` = excluded.`unpriced`;
END;
--> statement-breakpoint
CREATE TRIGGER `streams_sessions_delete` AFTER DELETE ON `streams` BEGIN
  INSERT INTO `sessions` (`project_id`, `session_id`, `first_ts`, `last_ts`, `turns`, `measured`, `unmeasured_input`, `uncached`, `read`, `write`, `write_1h`, `output`, `breaks`, `missed`, `extra_cost_micro_usd`, `unpriced`)
  SELECT `project_id`, `session_id`, min(`first_ts`), max(`last_ts`), sum(`turns`), sum(`measured`), sum(`unmeasured_input`), sum(`uncached`), sum(`read`), sum(`write`), sum(`write_1h`), sum(`output`), sum(`breaks`), sum(`missed`), sum(`extra_cost_micro_usd`), sum(`unpriced`)
  FROM `streams` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id` GROUP BY `project_id`, `session_id`
  ON CONFLICT (`project_id`, `session_id`) DO UPDATE SET `first_ts` = excluded.`first_ts`, `last_ts` = excluded.`last_ts`, `turns` = excluded.`turns`, `measured` = excluded.`measured`, `unmeasured_input` = excluded.`unmeasured_input`, `uncached` = excluded.`uncached`, `read` = excluded.`read`, `write` = excluded.`write`, `write_1h` = excluded.`write_1h`, `output` = excluded.`output`, `breaks` = excluded.`breaks`, `missed` = excluded.`missed`, `extra_cost_micro_usd` = excluded.`extra_cost_micro_usd`, `unpriced` = excluded.`unpriced`;
  DELETE FROM `sessions` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id`
    AND NOT EXISTS (SELECT 1 FROM `streams` WHERE `project_id` = OLD.`project_id` AND `session_id` = OLD.`session_id`);
END;
--> statement-breakpoint
DROP TRIGGER `breaks_rollups_insert`;
--> statement-breakpoint
DROP TRIGGER `breaks_rollups_delete`;
--> statement-breakpoint
DROP TRIGGER `breaks_rollups_replace`;
--> statement-breakpoint
CREATE TRIGGER `breaks_rollups_insert` AFTER INSERT ON `breaks` BEGIN
  INSERT INTO `break_cause_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `cause`, `breaks`, `missed`, `extra_cost_micro_usd`, `unpriced`)
  VALUES (NEW.`project_id`, NEW.`ts` / 60000, NEW.`model_id`, NEW.`provider_id`, NEW.`agent_id`, NEW.`reason`, coalesce(NEW.`cause`, ''), 1,
          coalesce(NEW.`missed`, 0), CAST(round(coalesce(NEW.`extra_cost_usd`, 0) * 1000000) AS INTEGER), NEW.`extra_cost_usd` IS NULL)
  ON CONFLICT (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `cause`) DO UPDATE SET
    `breaks` = `breaks` + 1, `missed` = `missed` + excluded.`missed`, `extra_cost_micro_usd` = `extra_cost_micro_usd` + excluded.`extra_cost_micro_usd`,
    `unpriced` = `unpriced` + excluded.`unpriced`;
  INSERT INTO `break_tool_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `tool`, `breaks`)
  SELECT NEW.`project_id`, NEW.`ts` / 60000, NEW.`model_id`, NEW.`provider_id`, NEW.`agent_id`, NEW.`reason`, tool.value, 1
  FROM json_each(NEW.`changed_tools`) AS tool WHERE true
  ON CONFLICT (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `tool`) DO UPDATE SET `breaks` = `breaks` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `breaks_rollups_delete` AFTER DELETE ON `breaks` BEGIN
  UPDATE `break_cause_rollups` SET `breaks` = `breaks` - 1, `missed` = `missed` - coalesce(OLD.`missed`, 0),
    `extra_cost_micro_usd` = `extra_cost_micro_usd` - CAST(round(coalesce(OLD.`extra_cost_usd`, 0) * 1000000) AS INTEGER),
    `unpriced` = `unpriced` - (OLD.`extra_cost_usd` IS NULL)
  WHERE `project_id` = OLD.`project_id` AND `minute` = OLD.`ts` / 60000 AND `model_id` = OLD.`model_id` AND `provider_id` = OLD.`provider_id`
    AND `agent_id` = OLD.`agent_id` AND `reason` = OLD.`reason` AND `cause` = coalesce(OLD.`cause`, '');
  UPDATE `break_tool_rollups` SET `breaks` = `breaks` - 1
  WHERE `project_id` = OLD.`project_id` AND `minute` = OLD.`ts` / 60000 AND `model_id` = OLD.`model_id` AND `provider_id` = OLD.`provider_id`
    AND `agent_id` = OLD.`agent_id` AND `reason` = OLD.`reason` AND `tool` IN (SELECT value FROM json_each(OLD.`changed_tools`));
END;
--> statement-breakpoint
CREATE TRIGGER `breaks_rollups_replace` BEFORE INSERT ON `breaks`
WHEN EXISTS (SELECT 1 FROM `breaks` WHERE `turn_id` = NEW.`turn_id`) BEGIN
  UPDATE `break_cause_rollups` SET `breaks` = `break_cause_rollups`.`breaks` - 1, `missed` = `break_cause_rollups`.`missed` - o.`missed`,
    `extra_cost_micro_usd` = `break_cause_rollups`.`extra_cost_micro_usd` - o.`micro_usd`,
    `unpriced` = `break_cause_rollups`.`unpriced` - o.`unpriced`
  FROM (
    SELECT `project_id`, `ts` / 60000 AS `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, coalesce(`cause`, '') AS `cause`,
           coalesce(`missed`, 0) AS `missed`, CAST(round(coalesce(`extra_cost_usd`, 0) * 1000000) AS INTEGER) AS `micro_usd`,
           `extra_cost_usd` IS NULL AS `unpriced`
    FROM `breaks` WHERE `turn_id` = NEW.`turn_id`
  ) AS o
  WHERE `break_cause_rollups`.`project_id` = o.`project_id` AND `break_cause_rollups`.`minute` = o.`minute`
    AND `break_cause_rollups`.`model_id` = o.`model_id` AND `break_cause_rollups`.`provider_id` = o.`provider_id`
    AND `break_cause_rollups`.`agent_id` = o.`agent_id` AND `break_cause_rollups`.`reason` = o.`reason` AND `break_cause_rollups`.`cause` = o.`cause`;
  UPDATE `break_tool_rollups` SET `breaks` = `break_tool_rollups`.`breaks` - 1
  FROM (
    SELECT b.`project_id`, b.`ts` / 60000 AS `minute`, b.`model_id`, b.`provider_id`, b.`agent_id`, b.`reason`, tool.value AS `tool`
    FROM `breaks` AS b, json_each(b.`changed_tools`) AS tool WHERE b.`turn_id` = NEW.`turn_id`
  ) AS o
  WHERE `break_tool_rollups`.`project_id` = o.`project_id` AND `break_tool_rollups`.`minute` = o.`minute`
    AND `break_tool_rollups`.`model_id` = o.`model_id` AND `break_tool_rollups`.`provider_id` = o.`provider_id`
    AND `break_tool_rollups`.`agent_id` = o.`agent_id` AND `break_tool_rollups`.`reason` = o.`reason` AND `break_tool_rollups`.`tool` = o.`tool`;
END;
--> statement-breakpoint
-- After the triggers: each stream's update brings its session's count along.
UPDATE `streams` SET `unpriced` = (SELECT count(*) FROM `breaks` AS b WHERE b.`stream_id` = `streams`.`id` AND b.`extra_cost_usd` IS NULL);
