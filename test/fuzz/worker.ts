// A fuzz worker thread: runs chunks of inputs through a target, one at a
// time, and says through shared memory which input it is on, so that the
// thread that made it can stop an input that runs past the time bound
// (fuzz.ts, Fuzzer). Besides the decoders' targets (loaded on first use, so
// that a new worker starts quickly) it has one that misbehaves on purpose,
// to prove that bound and the reports (harness-misbehaving).
import { parentPort, workerData } from 'node:worker_threads';
import { check, type ChunkRequest, type WorkerMessage } from './fuzz.js';
import type { FuzzTarget } from './targets.js';

/** Misbehaves on purpose, by input: the harness's own tests use it. */
const MISBEHAVING: FuzzTarget = {
  name: 'harness-misbehaving',
  corpus: [],
  json: false,
  run(input) {
    const text = input.toString('latin1');
    if (text === 'hang') for (;;);
    if (text === 'hang-async') return new Promise<void>(() => {});
    if (text === 'crash') throw new TypeError("Cannot read properties of undefined (reading 'x')");
    if (text === 'exit') process.exit(3);
  },
};

const heartbeat = new Int32Array(workerData.heartbeat as SharedArrayBuffer);
let decoders: Promise<Map<string, FuzzTarget>> | undefined;

async function targetNamed(name: string): Promise<FuzzTarget> {
  if (name === MISBEHAVING.name) return MISBEHAVING;
  decoders ??= import('./targets.js').then(async ({ targets }) => new Map((await targets()).map((t) => [t.name, t])));
  const target = (await decoders).get(name);
  if (!target) throw new Error(`no fuzz target "${name}"`);
  return target;
}

const post = (message: WorkerMessage) => parentPort!.postMessage(message);

parentPort!.on('message', async (request: ChunkRequest) => {
  const target = await targetNamed(request.target);
  let slowestMs = 0;
  for (let i = 0; i < request.inputs.length; i++) {
    const input = request.inputs[i]!;
    Atomics.store(heartbeat, 0, i);
    Atomics.add(heartbeat, 1, 1);
    const { problem, ms } = await check(target, Buffer.from(input.buffer, input.byteOffset, input.byteLength));
    slowestMs = Math.max(slowestMs, ms);
    if (problem) post({ kind: 'failure', index: i, problem });
  }
  Atomics.store(heartbeat, 0, -1);
  post({ kind: 'done', slowestMs });
});
parentPort!.postMessage('ready');
