// A harness process for client-exit.test.ts: queues 5,000 events for the
// server at argv[2] and then either ends (the client flushes when the event
// loop empties) or awaits client.shutdown(), per argv[3]. It prints the
// moment its work was done, and at exit the client's stats and failures.
import { writeSync } from 'node:fs';
import { CachebreakClient, type ClientFailure } from '../../src/client/index.js';
import { turn, usage } from '../core/scenario.js';

const [url, ending] = process.argv.slice(2) as [string, 'exit' | 'shutdown'];
const failures: ClientFailure['kind'][] = [];
const client = new CachebreakClient({ url, onError: (failure) => failures.push(failure.kind) });
for (let i = 0; i < 5_000; i++) client.send(turn(`r${i}`, { at: i * 1_000, usage: usage(i === 0 ? 0 : 40_000, 500) }));
process.on('exit', () => writeSync(1, `${JSON.stringify({ stats: client.stats, failures })}\n`));
writeSync(1, `${JSON.stringify({ queuedAt: Date.now() })}\n`);
if (ending === 'shutdown') await client.shutdown();
