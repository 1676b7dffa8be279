ALTER TABLE "turns" ADD COLUMN "agent_version" text;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "trace_id" text;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "span_id" text;