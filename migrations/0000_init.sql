CREATE TABLE `breaks` (
	`turn_id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`stream_id` integer NOT NULL,
	`ts` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`reason` text NOT NULL,
	`record` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `breaks_project_ts` ON `breaks` (`project_id`,`ts`);--> statement-breakpoint
CREATE TABLE `labels` (
	`id` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `labels_kind_value` ON `labels` (`kind`,`value`);--> statement-breakpoint
CREATE TABLE `prefixes` (
	`id` integer PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`model` text NOT NULL,
	`system_hash` text,
	`system_block_hashes` text,
	`toolset_id` integer,
	`cache_control_hash` text,
	`ttl_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prefixes_hash_unique` ON `prefixes` (`hash`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_name_unique` ON `projects` (`name`);--> statement-breakpoint
CREATE TABLE `rollups` (
	`minute` integer NOT NULL,
	`project_id` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`state` integer NOT NULL,
	`reason` text NOT NULL,
	`turns` integer DEFAULT 0 NOT NULL,
	`measured` integer DEFAULT 0 NOT NULL,
	`unmeasured_input` integer DEFAULT 0 NOT NULL,
	`uncached` integer DEFAULT 0 NOT NULL,
	`read` integer DEFAULT 0 NOT NULL,
	`write` integer DEFAULT 0 NOT NULL,
	`write_1h` integer DEFAULT 0 NOT NULL,
	`output` integer DEFAULT 0 NOT NULL,
	`breaks` integer DEFAULT 0 NOT NULL,
	`missed` integer DEFAULT 0 NOT NULL,
	`extra_cost_micro_usd` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rollups_key` ON `rollups` (`project_id`,`minute`,`model_id`,`provider_id`,`agent_id`,`state`,`reason`);--> statement-breakpoint
CREATE TABLE `streams` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` integer NOT NULL,
	`first_ts` integer,
	`last_ts` integer,
	`turns` integer DEFAULT 0 NOT NULL,
	`measured` integer DEFAULT 0 NOT NULL,
	`unmeasured_input` integer DEFAULT 0 NOT NULL,
	`uncached` integer DEFAULT 0 NOT NULL,
	`read` integer DEFAULT 0 NOT NULL,
	`write` integer DEFAULT 0 NOT NULL,
	`write_1h` integer DEFAULT 0 NOT NULL,
	`output` integer DEFAULT 0 NOT NULL,
	`breaks` integer DEFAULT 0 NOT NULL,
	`missed` integer DEFAULT 0 NOT NULL,
	`extra_cost_micro_usd` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `streams_key` ON `streams` (`project_id`,`session_id`,`agent_id`);--> statement-breakpoint
CREATE INDEX `streams_last_ts` ON `streams` (`project_id`,`last_ts`);--> statement-breakpoint
CREATE TABLE `toolsets` (
	`id` integer PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`tools` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `toolsets_hash_unique` ON `toolsets` (`hash`);--> statement-breakpoint
CREATE TABLE `totals` (
	`project_id` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`state` integer NOT NULL,
	`reason` text NOT NULL,
	`turns` integer DEFAULT 0 NOT NULL,
	`measured` integer DEFAULT 0 NOT NULL,
	`unmeasured_input` integer DEFAULT 0 NOT NULL,
	`uncached` integer DEFAULT 0 NOT NULL,
	`read` integer DEFAULT 0 NOT NULL,
	`write` integer DEFAULT 0 NOT NULL,
	`write_1h` integer DEFAULT 0 NOT NULL,
	`output` integer DEFAULT 0 NOT NULL,
	`breaks` integer DEFAULT 0 NOT NULL,
	`missed` integer DEFAULT 0 NOT NULL,
	`extra_cost_micro_usd` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `totals_key` ON `totals` (`project_id`,`model_id`,`provider_id`,`agent_id`,`state`,`reason`);--> statement-breakpoint
CREATE TABLE `turns` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`rid` integer NOT NULL,
	`request_id` text NOT NULL,
	`stream_id` integer,
	`ts` integer,
	`prefix_id` integer,
	`snapshot_provider_id` integer,
	`expect_miss` text,
	`message_hashes` blob,
	`end_ts` integer,
	`usage_provider_id` integer,
	`usage_model_id` integer,
	`uncached` integer,
	`read` integer,
	`write` integer,
	`write_1h` integer,
	`output` integer,
	`cache_reported` integer,
	`diagnostics` text,
	`state` integer
);
--> statement-breakpoint
CREATE INDEX `turns_rid` ON `turns` (`rid`);--> statement-breakpoint
CREATE INDEX `turns_stream_ts` ON `turns` (`stream_id`,`ts`);