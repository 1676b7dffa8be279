// `npm run bench`: prints every figure beside its same-run baseline and
// writes bench-results.json.
import { benchCore } from './core.js';
import { printRows, writeResults, type Row } from './lib.js';

const rows: Row[] = [...benchCore()];
printRows(rows);
writeResults('bench-results.json', rows);
