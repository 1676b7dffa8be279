CREATE TABLE `waiting_halves` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`key` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`bytes` integer NOT NULL,
	`expires_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `waiting_halves_key` ON `waiting_halves` (`project_id`,`key`,`kind`);--> statement-breakpoint
CREATE INDEX `waiting_halves_age` ON `waiting_halves` (`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `waiting_halves_expiry` ON `waiting_halves` (`expires_ms`);