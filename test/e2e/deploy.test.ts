// deploy/: the compose file (cachebreak, its keys, Prometheus and Grafana)
// is checked as far as this machine can without Docker: its structure, that
// every file it mounts exists, that Grafana's provisioned datasources are the
// ones the dashboards name, and that its Prometheus configuration passes
// `promtool check config` and, run by a real Prometheus against a real
// server with API keys, scrapes /metrics with the read key as a bearer token.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { COUNTERS } from '../../src/telemetry/counters.js';
import { cli } from '../cli/run.js';
import { tempDir } from '../helpers.js';
import { seedSession } from './events.js';
import { query, startPrometheus, until, type Json } from './prometheus.js';
import { postEvents, request, startServer } from './server.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const DASHBOARDS = fileURLToPath(new URL('../../dashboards/', import.meta.url));
const compose = parse(readFileSync(join(DEPLOY, 'docker-compose.yml'), 'utf8')) as Json;
const prometheusConfig = parse(readFileSync(join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')) as Json;

/** A service's mounts as [source, target]; `source` resolved when it is a path. */
function mounts(service: string): [string, string][] {
  return (compose.services[service].volumes as string[]).map((volume) => {
    const [source, target] = volume.split(':') as [string, string];
    return [source.startsWith('.') ? resolve(DEPLOY, source) : source, target];
  });
}

/** Where a named volume is mounted in a service. */
function mountOf(service: string, volume: string): string {
  const found = mounts(service).find(([source]) => source === volume);
  if (!found) throw new Error(`${service} does not mount the ${volume} volume`);
  return found[1];
}

function promtool(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { encoding: 'utf8', timeout: 10_000, cwd: join(DEPLOY, 'prometheus') });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') throw new Error('promtool is not installed: `apt-get install prometheus` (Debian/Ubuntu)');
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** The deploy's Prometheus configuration with the read key in `keyFile` and cachebreak at `target`, scraped every second. */
function localConfig(keyFile: string, target: string): string {
  const config = structuredClone(prometheusConfig);
  config.global.scrape_interval = '1s';
  const [job] = config.scrape_configs;
  job.authorization.credentials_file = keyFile;
  job.static_configs = [{ targets: [target] }];
  // Relative to the configuration file, which is elsewhere here.
  config.rule_files = (config.rule_files as string[]).map((file) => join(DEPLOY, 'prometheus', file));
  return stringify(config);
}

describe('deploy/docker-compose.yml', () => {
  it('has cachebreak, its keys, Prometheus and Grafana, and mounts only files that exist and volumes it declares', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['cachebreak', 'grafana', 'keys', 'prometheus']);
    for (const service of Object.keys(compose.services)) {
      for (const [source, target] of compose.services[service].volumes ? mounts(service) : []) {
        if (source.startsWith('/')) expect(existsSync(source), `${service}: ${source} → ${target}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${service}: volume ${source}`).toContain(source);
      }
    }
    // One image, built from the repository root by deploy/Dockerfile.
    expect(compose.services.keys.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    expect(existsSync(resolve(DEPLOY, '..', compose.services.keys.build.dockerfile))).toBe(true);
    expect(compose.services.cachebreak.image).toBe(compose.services.keys.image);
    expect(compose.services.cachebreak.depends_on.keys.condition).toBe('service_completed_successfully');
    expect(compose.services.cachebreak.command).toEqual(['serve', '--host', '0.0.0.0']);
  });

  it('provisions the Infinity plugin, the datasources every dashboard names, and every dashboard', () => {
    const grafana = compose.services.grafana;
    expect(grafana.environment.GF_PLUGINS_PREINSTALL).toContain('yesoreyeram-infinity-datasource');
    const byTarget = new Map(mounts('grafana').map(([source, target]) => [target, source]));
    const datasources = parse(readFileSync(byTarget.get('/etc/grafana/provisioning/datasources/cachebreak.yaml')!, 'utf8')) as Json;
    const provided = new Set((datasources.datasources as Json[]).map((d) => `${d.type} ${d.uid}`));
    const provider = (parse(readFileSync(byTarget.get('/etc/grafana/provisioning/dashboards/cachebreak.yaml')!, 'utf8')) as Json).providers[0];
    const dashboards = readdirSync(DASHBOARDS).filter((f) => f.endsWith('.json'));
    expect(dashboards.length).toBe(5);
    for (const file of dashboards) {
      expect(byTarget.get(join(provider.options.path, file)), file).toBe(join(DASHBOARDS, file));
      const named = new Set<string>();
      JSON.stringify(JSON.parse(readFileSync(join(DASHBOARDS, file), 'utf8')), (key, value) => {
        if (key === 'datasource' && value?.uid) named.add(`${value.type} ${value.uid}`);
        return value;
      });
      for (const datasource of named) expect(provided, `${file} names ${datasource}`).toContain(datasource);
    }
    // Both the Infinity datasource and Prometheus read with the key the keys service writes.
    const secrets = mountOf('keys', 'secrets');
    const infinity = (datasources.datasources as Json[]).find((d) => d.type === 'yesoreyeram-infinity-datasource')!;
    expect(infinity.secureJsonData.bearerToken).toBe(`$__file{${mountOf('grafana', 'secrets')}/read.key}`);
    expect(compose.services.keys.command.join('\n')).toContain(`> ${secrets}/read.key`);
    expect(prometheusConfig.scrape_configs[0].authorization.credentials_file).toBe(`${mountOf('prometheus', 'secrets')}/read.key`);
    expect(compose.services.prometheus.command).toContain(`--config.file=${mounts('prometheus').find(([source]) => source === join(DEPLOY, 'prometheus/prometheus.yml'))![1]}`);
  });

  it('its Prometheus configuration passes promtool and scrapes a server that has keys with the read key', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const db = join(dir, 'x.db');
    const create = async (scope: string) => (await cli(['keys', 'create', '--db', db, '--project', 'default', '--scope', scope])).stdout.trim();
    const readKey = await create('read');
    const ingestKey = await create('ingest');
    // As the keys service writes it: no trailing newline.
    const keyFile = join(dir, 'read.key');
    writeFileSync(keyFile, readKey);

    const server = await startServer({ db });
    expect(server.access).toBe('locked');
    expect((await request(server.url, '/metrics')).status).toBe(401);
    expect((await postEvents(server.url, seedSession(), { authorization: `Bearer ${ingestKey}` })).status).toBe(200);

    const config = join(dir, 'prometheus.yml');
    writeFileSync(config, localConfig(keyFile, new URL(server.url).host));
    expect(promtool('check', 'config', config)).toMatchObject({ status: 0 });
    const prometheus = await startPrometheus(readFileSync(config, 'utf8'));
    const alerts = (((await (await fetch(`${prometheus}/api/v1/rules?type=alert`)).json()) as Json).data.groups as Json[]).flatMap((group) => (group.rules as Json[]).map((rule) => rule.name));
    expect(alerts.sort()).toEqual(['CachebreakCacheRateLow', 'CachebreakExtraCostHigh', 'CachebreakNewBreakReason']);
    const turns = await until('stored turns scraped with the read key', 30_000, async () => {
      const result = (await query(prometheus, 'sum(cachebreak_turns_total{job="cachebreak"})')).data?.result;
      return result?.length === 1 ? Number(result[0].value[1]) : undefined;
    });
    expect(turns).toBe(4);
    expect((await query(prometheus, 'up{job="cachebreak"}')).data.result[0].value[1]).toBe('1');
  });

  it('ships alerting rules that Prometheus loads from where the compose file mounts them, pass promtool check rules and their unit tests', () => {
    const files = prometheusConfig.rule_files as string[];
    expect(files).toEqual(['cachebreak-alerts.yml']);
    const mounted = new Map(mounts('prometheus'));
    // rule_files are relative to the configuration file's directory.
    expect(mounted.get(join(DEPLOY, 'prometheus', files[0]!))).toBe(`/etc/prometheus/${files[0]}`);
    const checked = promtool('check', 'rules', files[0]!);
    expect(checked.output).toContain('SUCCESS: 4 rules found');
    expect(checked.status).toBe(0);
    const tested = promtool('test', 'rules', 'cachebreak-alerts.test.yml');
    expect(tested.output).toContain('SUCCESS');
    expect(tested.status).toBe(0);
    // The rules name only series cachebreak exposes.
    const rules = readFileSync(join(DEPLOY, 'prometheus', files[0]!), 'utf8');
    const named = new Set(rules.match(/\bcachebreak_[a-z_]+_total\b/g));
    expect([...named].sort()).toEqual(['cachebreak_breaks_total', 'cachebreak_breaks_unpriced_total', 'cachebreak_estimated_extra_cost_usd_total', 'cachebreak_tokens_total', 'cachebreak_turns_total']);
    const exposed = new Set(Object.values(COUNTERS).map((counter) => counter.name));
    for (const name of named) expect(exposed, name).toContain(name);
  });
});
