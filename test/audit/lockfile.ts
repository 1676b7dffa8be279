// The offline audit: every package version in package-lock.json (direct and
// transitive, production and development) checked against a committed
// snapshot of advisories (advisories.json), with the matches judged not to
// apply listed, with reasons, in accepted.json. No registry is asked: `npm
// audit` is refused by some registries (405), and CI must not depend on one.
import { readFileSync } from 'node:fs';
import { satisfies, valid, validRange } from 'semver';

export interface Advisory {
  id: string;
  package: string;
  /** npm semver range of affected versions. */
  vulnerable: string;
  severity: 'low' | 'moderate' | 'high' | 'critical';
  title: string;
}

export interface Acceptance {
  id: string;
  package: string;
  /** The exact versions accepted, separated by ||: a new version is judged again. */
  versions: string;
  reason: string;
}

export interface Installed {
  name: string;
  version: string;
  /** Where the lockfile puts it (node_modules/…). */
  path: string;
  dev: boolean;
}

export interface Finding {
  advisory: Advisory;
  installed: Installed;
}

export interface AuditResult {
  /** Matches nobody accepted: the check fails. */
  open: Finding[];
  /** Matches listed in accepted.json. */
  accepted: Finding[];
  /** Acceptances that match nothing any more: the check fails until they are removed. */
  stale: Acceptance[];
}

interface Lockfile {
  lockfileVersion?: number;
  packages?: Record<string, { version?: string; name?: string; dev?: boolean; link?: boolean; hasInstallScript?: boolean }>;
}

const ROOT = new URL('../../', import.meta.url);

export function readJson<T>(path: URL | string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export const readLockfile = (): Lockfile => readJson(new URL('package-lock.json', ROOT));
export const readAdvisories = (): Advisory[] => readJson<{ advisories: Advisory[] }>(new URL('advisories.json', import.meta.url)).advisories;
export const readAcceptances = (): Acceptance[] => readJson<{ accepted: Acceptance[] }>(new URL('accepted.json', import.meta.url)).accepted;

/** Every installed package of a v2/v3 lockfile, by its node_modules path. */
export function installedPackages(lock: Lockfile): Installed[] {
  if (!lock.packages || (lock.lockfileVersion ?? 0) < 2) throw new Error('expected a package-lock.json of lockfileVersion 2 or 3 (npm 7 or later)');
  const out: Installed[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link || entry.version === undefined) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    out.push({ name, version: entry.version, path, dev: entry.dev === true });
  }
  return out;
}

/** A snapshot that cannot be checked is an error, not a silent pass. */
export function checkAdvisories(advisories: readonly Advisory[]): string[] {
  const problems: string[] = [];
  for (const a of advisories) {
    if (!/^(GHSA(-[23456789cfghjmpqrvwx]{4}){3}|CVE-\d{4}-\d+)$/.test(a.id)) problems.push(`${a.id}: not a GHSA or CVE id`);
    if (validRange(a.vulnerable) === null) problems.push(`${a.id}: "${a.vulnerable}" is not a semver range`);
    if (!['low', 'moderate', 'high', 'critical'].includes(a.severity)) problems.push(`${a.id}: unknown severity ${a.severity}`);
  }
  return problems;
}

function isAccepted(acceptances: readonly Acceptance[], finding: Finding): Acceptance | undefined {
  return acceptances.find(
    (a) => a.id === finding.advisory.id && a.package === finding.installed.name && a.versions.split('||').map((v) => v.trim()).includes(finding.installed.version),
  );
}

export function audit(lock: Lockfile, advisories: readonly Advisory[], acceptances: readonly Acceptance[]): AuditResult {
  const byPackage = new Map<string, Advisory[]>();
  for (const a of advisories) byPackage.set(a.package, [...(byPackage.get(a.package) ?? []), a]);
  const result: AuditResult = { open: [], accepted: [], stale: [] };
  const used = new Set<Acceptance>();
  for (const installed of installedPackages(lock)) {
    // A version that is not semver (a git or file dependency) cannot be placed in a range: it is reported.
    if (valid(installed.version) === null) {
      for (const advisory of byPackage.get(installed.name) ?? []) result.open.push({ advisory, installed });
      continue;
    }
    for (const advisory of byPackage.get(installed.name) ?? []) {
      if (!satisfies(installed.version, advisory.vulnerable, { includePrerelease: true })) continue;
      const finding = { advisory, installed };
      const acceptance = isAccepted(acceptances, finding);
      if (acceptance) {
        used.add(acceptance);
        result.accepted.push(finding);
      } else {
        result.open.push(finding);
      }
    }
  }
  result.stale = acceptances.filter((a) => !used.has(a));
  return result;
}

export function describeFinding({ advisory, installed }: Finding): string {
  return `${installed.name}@${installed.version} (${installed.path}${installed.dev ? ', dev' : ''}): ${advisory.severity} ${advisory.id} ${advisory.title} (affected ${advisory.vulnerable})`;
}

/**
 * Advisories from `npm audit --json` (auditReportVersion 2), as snapshot
 * entries: each `via` object names its advisory URL, package and range.
 */
export function advisoriesOfNpmAudit(report: unknown): Advisory[] {
  const vulnerabilities = (report as { vulnerabilities?: Record<string, { via?: unknown[] }> }).vulnerabilities ?? {};
  const out = new Map<string, Advisory>();
  for (const entry of Object.values(vulnerabilities)) {
    for (const via of entry.via ?? []) {
      if (typeof via !== 'object' || via === null) continue; // a string names another package's entry
      const v = via as { url?: string; name?: string; range?: string; severity?: Advisory['severity']; title?: string };
      const id = /GHSA(-[0-9a-z]{4}){3}/.exec(v.url ?? '')?.[0];
      if (!id || !v.name || !v.range) continue;
      out.set(`${id} ${v.name}`, { id, package: v.name, vulnerable: v.range, severity: v.severity ?? 'moderate', title: v.title ?? '' });
    }
  }
  return [...out.values()];
}

/** The snapshot with `added` merged in: an entry of the same id and package is replaced. */
export function mergeAdvisories(current: readonly Advisory[], added: readonly Advisory[]): Advisory[] {
  const merged = new Map(current.map((a) => [`${a.id} ${a.package}`, a]));
  for (const a of added) merged.set(`${a.id} ${a.package}`, a);
  return [...merged.values()].sort((a, b) => a.package.localeCompare(b.package) || a.id.localeCompare(b.id));
}
