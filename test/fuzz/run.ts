// `npm run fuzz -- [--inputs N] [--seed S] [--target NAME]`: the full fuzzing
// run (1,000,000 inputs per decoder by default). Every failing input is kept
// under test/fixtures/fuzz/<target>/ for the tests to replay.
import { fuzz, keepRegression } from './fuzz.js';
import { targets } from './targets.js';

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
}

const inputs = Number(flag('inputs', '1000000'));
const seed = Number(flag('seed', String(Date.now() % 2 ** 31)));
const only = flag('target', '');
let failed = 0;
for (const target of (await targets()).filter((t) => only === '' || t.name === only)) {
  const start = performance.now();
  const report = fuzz(target, inputs, seed);
  const seconds = (performance.now() - start) / 1000;
  console.log(
    `${target.name}: ${report.inputs.toLocaleString('en-US')} inputs in ${seconds.toFixed(1)} s (${Math.round(report.inputs / seconds).toLocaleString('en-US')}/s), ` +
      `slowest ${report.slowestMs.toFixed(1)} ms, ${report.failures.length} failures (seed ${seed})`,
  );
  for (const failure of report.failures.slice(0, 20)) console.log(`  ${failure.problem}\n    kept as ${keepRegression(target.name, failure.input)}`);
  for (const failure of report.failures.slice(20)) keepRegression(target.name, failure.input);
  failed += report.failures.length;
}
process.exitCode = failed > 0 ? 1 : 0;
