// `npm run fuzz -- [--inputs N] [--seed S] [--target NAME]`: the full fuzzing
// run (1,000,000 inputs per decoder by default), each input bounded in time
// for real (fuzz.ts: a worker thread, stopped when an input runs too long).
// Every failing input — a crash, an unclear rejection, a hang — is kept
// under test/fixtures/fuzz/<target>/ for the tests to replay.
import { fuzz, Fuzzer, INPUT_BUDGET_MS, keepRegression } from './fuzz.js';
import { targets } from './targets.js';

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
}

const inputs = Number(flag('inputs', '1000000'));
const seed = Number(flag('seed', String(Date.now() % 2 ** 31)));
const only = flag('target', '');
const chosen = (await targets()).filter((t) => only === '' || t.name === only);
if (chosen.length === 0) throw new Error(`no fuzz target "${only}"`);
const fuzzer = await Fuzzer.start();
let failed = 0;
try {
  for (const target of chosen) {
    const start = performance.now();
    const report = await fuzz(fuzzer, target, inputs, seed);
    const seconds = (performance.now() - start) / 1000;
    console.log(
      `${target.name}: ${report.inputs.toLocaleString('en-US')} inputs in ${seconds.toFixed(1)} s (${Math.round(report.inputs / seconds).toLocaleString('en-US')}/s), ` +
        `slowest ${report.slowestMs.toFixed(1)} ms (bound ${INPUT_BUDGET_MS} ms), ${report.failures.length} failures (seed ${seed})`,
    );
    for (const [i, failure] of report.failures.entries()) {
      const file = keepRegression(target.name, failure.input);
      if (i < 20) console.log(`  ${failure.problem}\n    kept as ${file}`);
    }
    failed += report.failures.length;
  }
} finally {
  await fuzzer.close();
}
process.exitCode = failed > 0 ? 1 : 0;
