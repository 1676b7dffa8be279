CREATE TABLE `gap_rollups` (
	`project_id` integer NOT NULL,
	`hour` integer NOT NULL,
	`stream_id` integer NOT NULL,
	`model_id` integer NOT NULL,
	`provider_id` integer NOT NULL,
	`bucket` integer NOT NULL,
	`turns` integer DEFAULT 0 NOT NULL,
	`stake` integer DEFAULT 0 NOT NULL,
	`rewritten` integer DEFAULT 0 NOT NULL,
	`written` integer DEFAULT 0 NOT NULL,
	`written_1h` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `gap_rollups_key` ON `gap_rollups` (`project_id`,`hour`,`stream_id`,`model_id`,`provider_id`,`bucket`);--> statement-breakpoint
ALTER TABLE `turns` ADD `gap_bucket` integer;--> statement-breakpoint
ALTER TABLE `turns` ADD `gap_stake` integer;--> statement-breakpoint
ALTER TABLE `turns` ADD `gap_rewritten` integer;