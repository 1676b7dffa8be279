CREATE TABLE `sessions` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`session_id` text NOT NULL,
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
	`extra_cost_micro_usd` integer DEFAULT 0 NOT NULL,
	`rate_rank` real GENERATED ALWAYS AS (coalesce(read * 1.0 / nullif(uncached + read + write, 0), 2.0)) VIRTUAL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_key` ON `sessions` (`project_id`,`session_id`);--> statement-breakpoint
CREATE INDEX `sessions_last_ts` ON `sessions` (`project_id`,`last_ts`,`session_id`);--> statement-breakpoint
CREATE INDEX `sessions_rate` ON `sessions` (`project_id`,`rate_rank`,`session_id`);--> statement-breakpoint
CREATE INDEX `sessions_cost` ON `sessions` (`project_id`,"extra_cost_micro_usd" DESC,`session_id`);