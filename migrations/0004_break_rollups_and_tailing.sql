CREATE TABLE `break_cause_rollups` (
	`project_id` integer NOT NULL,
	`minute` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`reason` text NOT NULL,
	`cause` text NOT NULL,
	`breaks` integer DEFAULT 0 NOT NULL,
	`missed` integer DEFAULT 0 NOT NULL,
	`extra_cost_micro_usd` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `break_cause_rollups_key` ON `break_cause_rollups` (`project_id`,`minute`,`model_id`,`provider_id`,`agent_id`,`reason`,`cause`);--> statement-breakpoint
CREATE TABLE `break_tool_rollups` (
	`project_id` integer NOT NULL,
	`minute` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`agent_id` integer NOT NULL,
	`reason` text NOT NULL,
	`tool` text NOT NULL,
	`breaks` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `break_tool_rollups_key` ON `break_tool_rollups` (`project_id`,`minute`,`model_id`,`provider_id`,`agent_id`,`reason`,`tool`);--> statement-breakpoint
CREATE TABLE `external_breaks` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`key` text NOT NULL,
	`harness` text NOT NULL,
	`session_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`source` text NOT NULL,
	`ts` integer NOT NULL,
	`reason` text NOT NULL,
	`call_number` integer,
	`previous_cache_read_tokens` integer,
	`current_cache_read_tokens` integer,
	`cache_creation_tokens` integer,
	`diff_path` text,
	`file` text,
	`line` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `external_breaks_key` ON `external_breaks` (`project_id`,`key`);--> statement-breakpoint
CREATE INDEX `external_breaks_project_ts` ON `external_breaks` (`project_id`,`ts`);--> statement-breakpoint
CREATE TABLE `tail_checkpoints` (
	`project_id` integer NOT NULL,
	`file_id` text NOT NULL,
	`path` text NOT NULL,
	`offset` integer NOT NULL,
	`resume_at` integer NOT NULL,
	`resume_line` integer NOT NULL,
	`head_length` integer NOT NULL,
	`head_hash` text NOT NULL,
	`updated_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tail_checkpoints_key` ON `tail_checkpoints` (`project_id`,`file_id`);--> statement-breakpoint
ALTER TABLE `breaks` ADD `cause` text GENERATED ALWAYS AS (json_extract(record, '$.cause')) VIRTUAL;--> statement-breakpoint
ALTER TABLE `breaks` ADD `missed` integer GENERATED ALWAYS AS (json_extract(record, '$.missedCacheReadTokens')) VIRTUAL;--> statement-breakpoint
ALTER TABLE `breaks` ADD `extra_cost_usd` real GENERATED ALWAYS AS (json_extract(record, '$.estimatedExtraCostUsd')) VIRTUAL;--> statement-breakpoint
ALTER TABLE `breaks` ADD `changed_tools` text GENERATED ALWAYS AS (json_extract(record, '$.changedToolNames')) VIRTUAL;--> statement-breakpoint
CREATE INDEX `breaks_stream_ts` ON `breaks` (`stream_id`,`ts`);