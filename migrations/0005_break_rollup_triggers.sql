-- Keeps break_cause_rollups and break_tool_rollups equal to an aggregation of
-- the breaks table, whoever inserts, revises or deletes a break (the writer,
-- retention). A revision is INSERT OR REPLACE: its implicit delete fires no
-- delete trigger (recursive_triggers is off, SQLite's default), so the
-- replaced row is subtracted before the insert.

-- Breaks stored before these tables existed.
INSERT INTO `break_cause_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `cause`, `breaks`, `missed`, `extra_cost_micro_usd`)
SELECT `project_id`, `ts` / 60000, `model_id`, `provider_id`, `agent_id`, `reason`, coalesce(`cause`, ''), count(*), coalesce(sum(`missed`), 0),
       coalesce(sum(CAST(round(coalesce(`extra_cost_usd`, 0) * 1000000) AS INTEGER)), 0)
FROM `breaks` GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
INSERT INTO `break_tool_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `tool`, `breaks`)
SELECT b.`project_id`, b.`ts` / 60000, b.`model_id`, b.`provider_id`, b.`agent_id`, b.`reason`, tool.value, count(*)
FROM `breaks` AS b, json_each(b.`changed_tools`) AS tool GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
CREATE TRIGGER `breaks_rollups_insert` AFTER INSERT ON `breaks` BEGIN
  INSERT INTO `break_cause_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `cause`, `breaks`, `missed`, `extra_cost_micro_usd`)
  VALUES (NEW.`project_id`, NEW.`ts` / 60000, NEW.`model_id`, NEW.`provider_id`, NEW.`agent_id`, NEW.`reason`, coalesce(NEW.`cause`, ''), 1,
          coalesce(NEW.`missed`, 0), CAST(round(coalesce(NEW.`extra_cost_usd`, 0) * 1000000) AS INTEGER))
  ON CONFLICT (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `cause`) DO UPDATE SET
    `breaks` = `breaks` + 1, `missed` = `missed` + excluded.`missed`, `extra_cost_micro_usd` = `extra_cost_micro_usd` + excluded.`extra_cost_micro_usd`;
  INSERT INTO `break_tool_rollups` (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `tool`, `breaks`)
  SELECT NEW.`project_id`, NEW.`ts` / 60000, NEW.`model_id`, NEW.`provider_id`, NEW.`agent_id`, NEW.`reason`, tool.value, 1
  FROM json_each(NEW.`changed_tools`) AS tool WHERE true
  ON CONFLICT (`project_id`, `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, `tool`) DO UPDATE SET `breaks` = `breaks` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `breaks_rollups_delete` AFTER DELETE ON `breaks` BEGIN
  UPDATE `break_cause_rollups` SET `breaks` = `breaks` - 1, `missed` = `missed` - coalesce(OLD.`missed`, 0),
    `extra_cost_micro_usd` = `extra_cost_micro_usd` - CAST(round(coalesce(OLD.`extra_cost_usd`, 0) * 1000000) AS INTEGER)
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
    `extra_cost_micro_usd` = `break_cause_rollups`.`extra_cost_micro_usd` - o.`micro_usd`
  FROM (
    SELECT `project_id`, `ts` / 60000 AS `minute`, `model_id`, `provider_id`, `agent_id`, `reason`, coalesce(`cause`, '') AS `cause`,
           coalesce(`missed`, 0) AS `missed`, CAST(round(coalesce(`extra_cost_usd`, 0) * 1000000) AS INTEGER) AS `micro_usd`
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
