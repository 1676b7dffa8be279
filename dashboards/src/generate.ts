// `npm run dashboards`: writes every dashboard's JSON next to this folder.
// The files are committed; a test fails when they differ from what this writes.
import { writeFileSync } from 'node:fs';
import { DASHBOARDS, render } from './all.js';

for (const [file, build] of Object.entries(DASHBOARDS)) {
  writeFileSync(new URL(`../${file}`, import.meta.url), render(build));
  console.log(`wrote dashboards/${file}`);
}
