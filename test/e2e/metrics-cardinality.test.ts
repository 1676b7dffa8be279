// /metrics label values come from what clients send: every model and provider
// string would otherwise be a series forever. A real server is sent 2,000
// distinct models; per project only the most used keep their own series, the
// rest are counted as model="other", and every total stays whole.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { iso, T0, type WireEvent } from './events.js';
import { postEvents, request, startServer } from './server.js';

const MODELS = 2_000;
const BATCH = 500;

/** A whole turn of `model`, alone in its session: a cold cache write. */
function turn(model: string, provider: string, n: number): WireEvent {
  return {
    type: 'turn',
    requestId: `req-${n}`,
    sessionId: `s-${n}`,
    ts: iso(T0 + n * 1000),
    provider,
    model,
    uncachedInputTokens: 10,
    cacheReadInputTokens: 0,
    cacheWriteInputTokens: 2_000,
    outputTokens: 5,
  };
}

/** Samples of one metric: labels → value. */
function series(exposition: string, name: string): { labels: Record<string, string>; value: number }[] {
  const found: { labels: Record<string, string>; value: number }[] = [];
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels = Object.fromEntries([...line.slice(name.length + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    found.push({ labels, value: Number(line.slice(close + 2)) });
  }
  return found;
}

const distinct = (rows: { labels: Record<string, string> }[], label: string) => new Set(rows.map((r) => r.labels[label]));
const sum = (rows: { value: number }[]) => rows.reduce((total, r) => total + r.value, 0);

function rssMiB(pid: number): number {
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);
}

describe('/metrics series per project', () => {
  it('2,000 distinct models: the 50 most used and "other", with every total whole, and promtool still passes', async () => {
    const server = await startServer({ args: ['--grpc-port', 'off'] });
    const before = rssMiB(server.pid);
    // 2,000 models of one turn each, half of them with a provider of their own.
    let n = 0;
    for (let start = 0; start < MODELS; start += BATCH) {
      const events = Array.from({ length: BATCH }, (_, i) => {
        const m = start + i;
        return turn(`model-${m}`, m % 2 === 0 ? 'anthropic' : `vendor-${m}`, n++);
      });
      expect((await postEvents(server.url, events)).body).toMatchObject({ accepted: BATCH, rejected: [] });
    }
    // Then a model used more than any of them, though it came last.
    const popular = Array.from({ length: 5 }, () => turn('claude-popular', 'anthropic', n++));
    expect((await postEvents(server.url, popular)).body).toMatchObject({ accepted: 5, rejected: [] });

    const reply = await request(server.url, '/metrics');
    expect(reply.status).toBe(200);
    const text = reply.text;
    const turns = series(text, 'cachebreak_turns_total');
    const tokens = series(text, 'cachebreak_tokens_total').filter((s) => s.labels.kind === 'cache_write');
    console.log(
      `metrics cardinality: ${text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length} series, ${text.length} bytes of /metrics, ` +
        `${distinct(turns, 'model').size} model values, RSS ${before} → ${rssMiB(server.pid)} MiB`,
    );

    for (const rows of [turns, tokens]) {
      expect(distinct(rows, 'model').size).toBeLessThanOrEqual(51);
      expect(distinct(rows, 'provider').size).toBeLessThanOrEqual(51);
      expect(distinct(rows, 'model')).toContain('other');
      expect(distinct(rows, 'model')).toContain('claude-popular');
    }
    // Nothing is lost: "other" carries the rest.
    expect(sum(turns)).toBe(MODELS + 5);
    expect(sum(tokens)).toBe((MODELS + 5) * 2_000);
    expect(sum(turns.filter((s) => s.labels.model === 'claude-popular'))).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(64 * 1024);

    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 10_000 });
    expect((promtool.error as NodeJS.ErrnoException | undefined)?.code, 'promtool is required: apt-get install prometheus').toBeUndefined();
    expect({ status: promtool.status, output: `${promtool.stdout}${promtool.stderr}`.trim() }).toEqual({ status: 0, output: '' });
  });
});
