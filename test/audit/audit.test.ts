// The dependency audit CI runs with no registry (npm audit gets 405 from
// ours): package-lock.json against a committed advisory snapshot. A lockfile
// that pins a known-vulnerable version fails, unless that exact version is
// accepted with a reason; every install script is approved or dropped.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  advisoriesOfNpmAudit,
  audit,
  checkAdvisories,
  describeFinding,
  installedPackages,
  mergeAdvisories,
  readAcceptances,
  readAdvisories,
  readLockfile,
  type Advisory,
} from './lockfile.js';

const lockfile = (packages: Record<string, { version: string; dev?: boolean }>) => ({
  lockfileVersion: 3,
  packages: { '': { name: 'cachebreak', version: '0.1.0' }, ...Object.fromEntries(Object.entries(packages).map(([path, entry]) => [path, entry])) },
});

describe('the offline dependency audit', () => {
  it('finds no open advisory in package-lock.json, and every acceptance still matches', () => {
    const advisories = readAdvisories();
    expect(checkAdvisories(advisories)).toEqual([]);
    const result = audit(readLockfile(), advisories, readAcceptances());
    expect(result.open.map(describeFinding)).toEqual([]);
    expect(result.stale).toEqual([]);
    expect(result.accepted.map((f) => `${f.installed.name}@${f.installed.version} ${f.advisory.id}`)).toEqual(['esbuild@0.18.20 GHSA-67mh-4wv8-2f99']);
  });

  it('fails a lockfile that pins a vulnerable version, direct or nested, and passes the fixed one', () => {
    const vulnerable = lockfile({
      'node_modules/protobufjs': { version: '7.2.4' },
      'node_modules/@grpc/grpc-js': { version: '1.10.8' },
      'node_modules/foo/node_modules/semver': { version: '7.5.1', dev: true },
      'node_modules/simple-get': { version: '4.0.0' },
    });
    const result = audit(vulnerable, readAdvisories(), []);
    expect(result.open.map((f) => `${f.installed.path}@${f.installed.version} ${f.advisory.id}`).sort()).toEqual([
      'node_modules/@grpc/grpc-js@1.10.8 GHSA-7v5v-9h63-cj86',
      'node_modules/foo/node_modules/semver@7.5.1 GHSA-c2qf-rxjj-qqgw',
      'node_modules/protobufjs@7.2.4 GHSA-h755-8qp9-cq85',
      'node_modules/protobufjs@7.2.4 GHSA-xq3m-2v4x-88gg',
      'node_modules/simple-get@4.0.0 GHSA-wpg7-2c88-r8xv',
    ]);
    expect(describeFinding(result.open.find((f) => f.installed.name === 'semver')!)).toBe(
      'semver@7.5.1 (node_modules/foo/node_modules/semver, dev): high GHSA-c2qf-rxjj-qqgw semver vulnerable to Regular Expression Denial of Service (affected <5.7.2 || >=6.0.0 <6.3.1 || >=7.0.0 <7.5.2)',
    );
    const fixed = lockfile({ 'node_modules/protobufjs': { version: '7.5.5' }, 'node_modules/@grpc/grpc-js': { version: '1.10.9' }, 'node_modules/simple-get': { version: '4.0.1' } });
    expect(audit(fixed, readAdvisories(), []).open).toEqual([]);
  });

  it('accepts only the exact versions an acceptance names, and reports one that matches nothing', () => {
    const lock = lockfile({ 'node_modules/esbuild': { version: '0.24.0', dev: true } });
    const acceptance = { id: 'GHSA-67mh-4wv8-2f99', package: 'esbuild', versions: '0.18.20', reason: 'dev server unused' };
    const result = audit(lock, readAdvisories(), [acceptance]);
    expect(result.open.map((f) => f.installed.version)).toEqual(['0.24.0']);
    expect(result.stale).toEqual([acceptance]);
    expect(audit(lock, readAdvisories(), [{ ...acceptance, versions: '0.18.20 || 0.24.0' }]).open).toEqual([]);
  });

  it('refuses a snapshot it cannot check', () => {
    const bad: Advisory[] = [
      { id: 'GHSA-xxxx-yyyy-zzzz', package: 'a', vulnerable: '<1.0.0', severity: 'high', title: '' },
      { id: 'CVE-2024-1', package: 'b', vulnerable: 'not a range', severity: 'high', title: '' },
    ];
    expect(checkAdvisories(bad)).toEqual(['GHSA-xxxx-yyyy-zzzz: not a GHSA or CVE id', 'CVE-2024-1: "not a range" is not a semver range']);
    expect(() => installedPackages({ lockfileVersion: 1 })).toThrow('lockfileVersion 2 or 3');
  });

  it('takes new advisories from an npm audit --json report, where the registry answers one', () => {
    const report = {
      auditReportVersion: 2,
      vulnerabilities: {
        protobufjs: {
          name: 'protobufjs',
          severity: 'critical',
          via: [{ source: 1116832, name: 'protobufjs', dependency: 'protobufjs', title: 'Arbitrary code execution in protobufjs', url: 'https://github.com/advisories/GHSA-xq3m-2v4x-88gg', severity: 'critical', range: '<7.5.5' }],
        },
        '@grpc/proto-loader': { name: '@grpc/proto-loader', severity: 'critical', via: ['protobufjs'] },
      },
    };
    const added = advisoriesOfNpmAudit(report);
    expect(added).toEqual([{ id: 'GHSA-xq3m-2v4x-88gg', package: 'protobufjs', vulnerable: '<7.5.5', severity: 'critical', title: 'Arbitrary code execution in protobufjs' }]);
    const merged = mergeAdvisories(readAdvisories(), added);
    expect(merged.filter((a) => a.id === 'GHSA-xq3m-2v4x-88gg')).toHaveLength(1);
    expect(merged).toHaveLength(readAdvisories().length);
  });
});

describe('install scripts', () => {
  it('every package with an install script is approved or dropped in package.json allowScripts', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { allowScripts: Record<string, boolean> };
    const lock = readLockfile();
    const withScripts = Object.entries(lock.packages!)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    const unreviewed = [...new Set(withScripts)].filter((name) => typeof pkg.allowScripts[name] !== 'boolean');
    expect(unreviewed).toEqual([]);
    // protobufjs' postinstall only warns about version schemes of dependents: not needed, not run.
    expect(pkg.allowScripts.protobufjs).toBe(false);
    // @google/genai's preinstall is an echo.
    expect(pkg.allowScripts['@google/genai']).toBe(false);
    // better-sqlite3 builds or fetches its native binding: needed.
    expect(pkg.allowScripts['better-sqlite3']).toBe(true);
  });
});
