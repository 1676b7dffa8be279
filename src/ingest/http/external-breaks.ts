// POST /v1/breaks/external: breaks a harness reported itself (what
// `tail --server` reads from Claude Code debug logs), stored beside
// cachebreak's own. The same report sent again stores nothing.
import type { Hono } from 'hono';
import { z } from 'zod';
import type { AppDeps, AppEnv } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { ExternalBreak } from '../../store/store.js';
import { mediaType, readBody } from './body.js';
import { tooManyEvents } from './route.js';
import { toMs, type Rejection } from './events.js';
import { timestamp } from './schema.js';
import { jsonProblem } from '../json-problem.js';
import { timeProblem } from '../../time.js';

const count = z.number().int().nonnegative().nullable().optional();
/** Stored as text, which in PostgreSQL cannot hold a NUL byte: refused on both stores alike. */
const text = (min: number, max: number) =>
  z.string().min(min).max(max).refine((value) => !value.includes('\0'), 'contains a NUL byte (\\u0000), which no stored value holds; remove it');
const label = text(1, 256);

const externalBreakInput = z.object({
  harness: text(1, 64),
  sessionId: label,
  agentId: label.optional().describe('The stream as cachebreak names it; default "main"'),
  source: text(0, 256).optional().describe("The harness's own name of the request's origin"),
  ts: timestamp,
  reason: text(1, 2_000).describe("The harness's reason text, verbatim"),
  callNumber: count,
  previousCacheReadTokens: count,
  currentCacheReadTokens: count,
  cacheCreationTokens: count,
  diffPath: text(0, 4_096).nullable().optional(),
  file: text(0, 4_096).nullable().optional(),
  line: count,
});

function toExternalBreak(input: z.infer<typeof externalBreakInput>): ExternalBreak {
  return {
    harness: input.harness,
    sessionId: input.sessionId,
    agentId: input.agentId ?? 'main',
    source: input.source ?? '',
    ts: toMs(input.ts),
    reason: input.reason,
    callNumber: input.callNumber ?? null,
    previousCacheReadTokens: input.previousCacheReadTokens ?? null,
    currentCacheReadTokens: input.currentCacheReadTokens ?? null,
    cacheCreationTokens: input.cacheCreationTokens ?? null,
    diffPath: input.diffPath ?? null,
    file: input.file ?? null,
    line: input.line ?? null,
  };
}

export function registerExternalBreakIngest(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post('/v1/breaks/external', async (c) => {
    if (mediaType(c.req.raw) !== 'application/json') {
      throw new CachebreakError('unsupported_media_type', 'expected application/json', 'send {"breaks": [...]} as application/json');
    }
    let body: unknown;
    try {
      body = JSON.parse((await readBody(c.req.raw, c.var.body)).toString('utf8'));
    } catch (error) {
      if (error instanceof CachebreakError) throw error;
      throw new CachebreakError('invalid_body', `body is not JSON: ${jsonProblem(error)}`, 'send {"breaks": [...]}');
    }
    const list = (body as { breaks?: unknown } | null)?.breaks;
    if (!Array.isArray(list)) throw new CachebreakError('invalid_body', 'expected {"breaks": [...]}', 'wrap the reports in {"breaks": [...]}');
    if (list.length > deps.limits.maxEvents) throw tooManyEvents(list.length, deps.limits.maxEvents);
    const breaks: ExternalBreak[] = [];
    const rejected: Rejection[] = [];
    list.forEach((value, index) => {
      const parsed = externalBreakInput.safeParse(value);
      if (parsed.success) {
        const problem = timeProblem(toMs(parsed.data.ts));
        if (problem === undefined) breaks.push(toExternalBreak(parsed.data));
        else rejected.push({ index, field: 'ts', error: `breaks[${index}].ts: ${problem}, got ${JSON.stringify(parsed.data.ts)}` });
        return;
      }
      const issue = parsed.error.issues[0]!;
      const field = issue.path.join('.') || 'break';
      rejected.push({ index, field, error: `breaks[${index}].${field}: ${issue.message}` });
    });
    const result = await deps.pipeline.ingest(c.var.project, [], 'http', [], { externalBreaks: breaks });
    const accepted = result.externalBreaks ?? 0;
    return c.json({ accepted, duplicates: breaks.length - accepted, rejected });
  });
}
