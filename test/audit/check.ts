// `npm run audit:offline`: the lockfile against the committed advisory
// snapshot, with no registry asked. Exit code 0 when nothing unaccepted
// matches, 1 otherwise.
//
// `--merge-npm-audit FILE` adds the advisories of an `npm audit --json`
// report (run where the registry answers audits) to advisories.json.
import { writeFileSync } from 'node:fs';
import { advisoriesOfNpmAudit, audit, checkAdvisories, describeFinding, mergeAdvisories, readAcceptances, readAdvisories, readJson, readLockfile } from './lockfile.js';

const [flag, file] = process.argv.slice(2);
if (flag === '--merge-npm-audit') {
  if (!file) throw new Error('--merge-npm-audit needs the file npm audit --json wrote');
  const snapshotUrl = new URL('advisories.json', import.meta.url);
  const snapshot = readJson<{ about: string; updated: string; advisories: ReturnType<typeof readAdvisories> }>(snapshotUrl);
  const added = advisoriesOfNpmAudit(readJson(file));
  const advisories = mergeAdvisories(snapshot.advisories, added);
  writeFileSync(snapshotUrl, JSON.stringify({ ...snapshot, updated: new Date().toISOString().slice(0, 10), advisories }, null, 2) + '\n');
  console.log(`advisories.json: ${added.length} advisories from ${file} merged; ${advisories.length} in all`);
} else {
  const advisories = readAdvisories();
  const problems = checkAdvisories(advisories);
  const result = audit(readLockfile(), advisories, readAcceptances());
  for (const problem of problems) console.log(`advisories.json: ${problem}`);
  for (const finding of result.accepted) console.log(`accepted: ${describeFinding(finding)}`);
  for (const finding of result.open) console.log(`VULNERABLE: ${describeFinding(finding)}`);
  for (const stale of result.stale) console.log(`accepted.json: ${stale.id} (${stale.package}@${stale.versions}) matches nothing any more; remove it`);
  const failed = problems.length + result.open.length + result.stale.length > 0;
  console.log(failed ? 'offline audit: FAILED' : `offline audit: ${advisories.length} advisories, no open match`);
  process.exitCode = failed ? 1 : 0;
}
