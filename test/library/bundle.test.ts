// cachebreak/detector as a bundler sees it: built for a neutral platform (no
// Node built-ins to fall back on), minified and gzipped, within its budget of
// 30 KB beside xxhash-wasm's own size, pulling in nothing of the server; and
// the bundle judging a break in a real browser.
import { build, type Metafile } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';

/** The budget of everything but xxhash-wasm, minified and gzipped. */
const BUDGET = 30 * 1024;

interface Bundle {
  code: string;
  gzipped: number;
  metafile: Metafile;
}

async function bundle(entry: string, external: string[] = []): Promise<Bundle> {
  const result = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'neutral', mainFields: ['module', 'main'], write: false, metafile: true, external, logLevel: 'silent' });
  const code = result.outputFiles[0]!.text;
  return { code, gzipped: gzipSync(code).length, metafile: result.metafile };
}

const inputsOf = (b: Bundle) => Object.keys(b.metafile.inputs);
const importsOf = (b: Bundle) => Object.values(b.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path));

/**
 * The page's script, as text (the test runner rewrites import() in functions):
 * the bundle imported as a module, three turns of a session judged.
 */
const inBrowser = (code: string) => `(async () => {
  const lib = await import(URL.createObjectURL(new Blob([${JSON.stringify(code)}], { type: 'text/javascript' })));
  const lines = [];
  const detector = new lib.Detector({ onBreak: lib.logfmtEmitter((line) => lines.push(line)) });
  const body = (tools) => ({ model: 'claude-sonnet-4-5', system: 'You are careful.', tools: tools.map((name) => ({ name, input_schema: { type: 'object' } })), messages: [{ role: 'user', content: 'hi' }] });
  const stream = (read, write) => 'event: message_start\\ndata: ' + JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 9, cache_read_input_tokens: read, cache_creation_input_tokens: write } } }) + '\\n\\n';
  const turns = [[['read_file', 'shell'], stream(0, 30000)], [['read_file', 'shell'], stream(30000, 100)], [['shell', 'read_file'], stream(0, 30100)]];
  const states = turns.map(([tools, response], i) =>
    detector.observe({ requestId: 'r' + i, sessionId: 'browser', ts: 1000 * i, provider: 'anthropic', snapshot: lib.snapshotFromRequest('anthropic', body(tools)), usage: lib.usageFromResponse('anthropic', response) }).state);
  return { states, lines, emitter: typeof (await lib.defaultEmitter()) };
})()`;

describe('the cachebreak/detector bundle', () => {
  let detector: Bundle;
  let xxhash: Bundle;
  let client: Bundle;
  beforeAll(async () => {
    // @opentelemetry/api-logs is imported only when present at run time.
    [detector, xxhash, client] = await Promise.all([bundle('src/detector/index.ts', ['@opentelemetry/api-logs']), bundle('xxhash-wasm'), bundle('src/client/index.ts')]);
  });

  it(`is at most ${BUDGET / 1024} KB minified and gzipped, besides xxhash-wasm`, () => {
    const own = detector.gzipped - xxhash.gzipped;
    console.log(
      `cachebreak/detector: ${(detector.code.length / 1024).toFixed(1)} KB minified, ${(detector.gzipped / 1024).toFixed(1)} KB gzipped ` +
        `(xxhash-wasm with its wasm: ${(xxhash.gzipped / 1024).toFixed(1)} KB; the rest: ${(own / 1024).toFixed(1)} KB); ` +
        `cachebreak/client: ${(client.gzipped / 1024).toFixed(1)} KB gzipped`,
    );
    expect(own).toBeLessThanOrEqual(BUDGET);
  });

  it('pulls in the pure core and xxhash-wasm, nothing of the server, and imports only the optional OTel API', () => {
    const inputs = inputsOf(detector);
    const packages = [...new Set(inputs.filter((path) => path.includes('node_modules/')).map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)![1]))];
    expect(packages).toEqual(['xxhash-wasm']);
    const own = inputs.filter((path) => path.startsWith('src/'));
    expect(own.filter((path) => !/^src\/(core|detector|telemetry\/(break-record|break-line|logfmt)|ingest\/proxy\/(api|anthropic|openai|gemini))(\/|\.ts$)/.test(path))).toEqual([]);
    expect(own.some((path) => /src\/(store|serve|prices)\//.test(path))).toBe(false);
    expect(importsOf(detector).filter((path) => path !== '@opentelemetry/api-logs')).toEqual([]);
    // The client carries no hashing and no detection.
    expect(inputsOf(client).filter((path) => path.includes('node_modules/') || /src\/core\/(hash|detect|stream)/.test(path))).toEqual([]);
    expect(importsOf(client)).toEqual([]);
  });

  it('judges a break in a real browser', { timeout: 60_000 }, async () => {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      const found = (await page.evaluate(inBrowser(detector.code))) as { states: string[]; lines: string[]; emitter: string };
      expect(problems).toEqual([]);
      expect(found.states).toEqual(['cold', 'hit', 'miss']);
      expect(found.lines).toHaveLength(1);
      expect(found.lines[0]).toMatch(/event=prompt_cache_break reason=tools_order_changed session=browser .*changedToolNames=read_file,shell/);
      // Without @opentelemetry/api-logs in the page, breaks go to a logfmt line.
      expect(found.emitter).toBe('function');
    } finally {
      await browser.close();
    }
  });
});
