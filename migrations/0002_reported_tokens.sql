CREATE TABLE `reported_tokens` (
	`project_id` integer NOT NULL,
	`minute` integer NOT NULL,
	`source` text NOT NULL,
	`model_id` integer NOT NULL,
	`kind` text NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reported_tokens_key` ON `reported_tokens` (`project_id`,`minute`,`source`,`model_id`,`kind`);--> statement-breakpoint
CREATE TABLE `token_series` (
	`project_id` integer NOT NULL,
	`series` text NOT NULL,
	`start_ms` integer NOT NULL,
	`last_ms` integer NOT NULL,
	`last_value` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `token_series_key` ON `token_series` (`project_id`,`series`);