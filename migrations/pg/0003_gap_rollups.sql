CREATE TABLE "gap_rollups" (
	"project_id" integer NOT NULL,
	"hour" bigint NOT NULL,
	"stream_id" integer NOT NULL,
	"model_id" integer NOT NULL,
	"provider_id" integer NOT NULL,
	"bucket" integer NOT NULL,
	"turns" bigint DEFAULT 0 NOT NULL,
	"stake" bigint DEFAULT 0 NOT NULL,
	"rewritten" bigint DEFAULT 0 NOT NULL,
	"written" bigint DEFAULT 0 NOT NULL,
	"written_1h" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "gap_bucket" integer;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "gap_stake" bigint;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "gap_rewritten" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "gap_rollups_key" ON "gap_rollups" USING btree ("project_id","hour","stream_id","model_id","provider_id","bucket");--> statement-breakpoint
CREATE INDEX "turns_cold" ON "turns" USING btree ("project_id","ts") WHERE "turns"."state" = 1;