ALTER TABLE `turns` ADD `agent_version` text;--> statement-breakpoint
ALTER TABLE `turns` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `turns` ADD `span_id` text;