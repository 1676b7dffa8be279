CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`hash` text NOT NULL,
	`prefix` text NOT NULL,
	`scopes` text NOT NULL,
	`name` text,
	`created_ms` integer NOT NULL,
	`revoked_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_prefix` ON `api_keys` (`prefix`);