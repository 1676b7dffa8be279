// `npm run bench`: prints every figure beside its same-run baseline and
// writes bench-results.json. `npm run bench -- --turns N` scales the service
// figures down for a quick look.
import { benchCore } from './core.js';
import { benchGrafana } from './grafana.js';
import { benchIngest } from './ingest.js';
import { printRows, writeResults, type Row } from './lib.js';
import { benchOtlp } from './otlp.js';
import { benchTail } from './tail.js';

const turnsFlag = process.argv.indexOf('--turns');
const turns = turnsFlag >= 0 ? Number(process.argv[turnsFlag + 1]) : 1_000_000;

const rows: Row[] = [...benchCore(), ...(await benchIngest(turns)), ...(await benchOtlp(turns)), ...(await benchTail(turns)), ...(await benchGrafana(turns))];
printRows(rows);
writeResults('bench-results.json', rows, { turns });
