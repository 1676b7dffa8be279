// `cachebreak demo`: a day of synthetic coding-agent sessions written into the
// database, so that report, the REST API and the dashboards have something
// to show within seconds of installing.
import { SERVICE_DETECTION } from '../prices/index.js';
import type { CacheEvent } from '../core/types.js';
import type { Command } from './command.js';
import { demoWorkload } from './demo/workload.js';
import { plural } from './format.js';
import { openLocal, type LocalDatabase } from './local.js';
import { shownDb } from '../store/open.js';
import { progressBar } from './progress.js';

const BATCH = 1000;

function shapeOf(events: readonly CacheEvent[]) {
  const sessions = new Set<string>();
  const streams = new Set<string>();
  const requests = new Set<string>();
  for (const event of events) {
    requests.add(event.requestId);
    if (event.sessionId === undefined) continue;
    sessions.add(event.sessionId);
    streams.add(`${event.sessionId}\u0000${event.agentId ?? 'main'}`);
  }
  return { sessions: sessions.size, streams: streams.size, turns: requests.size };
}

export const demoCommand: Command<'db' | 'project' | 'seed'> = {
  name: 'demo',
  summary: 'Write a day of synthetic coding-agent sessions, with every kind of cache break, into the database.',
  usage: 'demo [options]',
  options: ['db', 'project', 'seed'],
  details: [
    'The sessions cover the 24 hours before now: main agents with interleaved subagents on Anthropic,',
    'OpenAI, Gemini, DeepSeek and DashScope models, and every break reason (an MCP server that',
    'reconnects, a re-ordered tool list, a date that changes at midnight, a model switch, a TTL',
    'change, pruned history, idle gaps, an eviction, usage-only telemetry, compaction), and something for',
    'every insight (docs/insights.md): subagents started side by side, a review the 1-hour TTL would have',
    'saved, a chat bot whose prompt opens with the time, provider diagnoses that agree and one that does not.',
    'The same seed writes the same sessions: run it twice and the second run stores nothing new.',
  ].join('\n'),
  async run({ values }, io) {
    const events = demoWorkload({ seed: values.seed, now: (io.now ?? Date.now)() });
    let db: LocalDatabase;
    try {
      db = await openLocal(values.db, values.project, 'demo', SERVICE_DETECTION);
    } catch (error) {
      io.stderr(`cachebreak demo: cannot open the database ${shownDb(values.db)}: ${(error as Error).message}\n`);
      return 1;
    }
    await db.bringUpToDate(io.stderr);
    let accepted = 0;
    const breaks = new Set<string>();
    db.onBreak(({ record }) => breaks.add(record.requestId));
    const progress = progressBar(io, 'demo', events.length, 'events');
    try {
      // A day written earlier with this seed holds the same sessions, at other times: keep it as it is.
      const first = events.find((e) => e.sessionId !== undefined)?.sessionId;
      const written = first !== undefined && (await db.hasSession(first));
      for (let start = 0; start < events.length && !written; start += BATCH) {
        const result = await db.ingest(events.slice(start, start + BATCH));
        accepted += result.accepted;
        progress.update(Math.min(start + BATCH, events.length));
      }
    } finally {
      progress.finish();
      await db.close();
    }

    const shape = shapeOf(events);
    const flags = `--db ${shownDb(values.db)}${values.project === 'default' ? '' : ` --project ${values.project}`}`;
    const lines =
      accepted === 0
        ? [
            `${shownDb(values.db)} already holds the demo for seed ${values.seed} (project ${values.project}): nothing new was written.`,
            `For a fresh day ending now, remove ${shownDb(values.db)} or pass another --seed.`,
          ]
        : [
            `Wrote the demo workload (seed ${values.seed}) into ${shownDb(values.db)}, project ${values.project}:`,
            `  ${plural(shape.sessions, 'session')} over the last 24 hours, ${plural(shape.streams, 'stream')} (main agents and subagents)`,
            `  ${plural(shape.turns, 'turn')}, ${plural(breaks.size, 'cache break')} across every break reason`,
          ];
    lines.push(
      '',
      'Next:',
      `  the summary here:    cachebreak report ${flags}`,
      `  the API and Grafana: cachebreak serve ${flags}   (port 4318)`,
      `  the latest breaks:   curl -s 'http://127.0.0.1:4318/v1/breaks?limit=5'   (while serve runs)`,
      `  what to change:      http://127.0.0.1:4318/insights?range=all   (while serve runs)`,
    );
    io.stdout(lines.join('\n') + '\n');
    return 0;
  },
};
