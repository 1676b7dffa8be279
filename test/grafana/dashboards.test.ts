// The dashboards without a Grafana server: the committed JSON is what the
// generator writes, it type-checks against @grafana/schema, passes the
// lints, and every Infinity query in it (panels, annotations, variables)
// answers the demo database with the columns and types it declares.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARDS, render } from '../../dashboards/src/all.js';
import { dashboardTypeErrors } from './dashboard-types.js';
import { demoApp, DEMO_RANGE } from './demo.js';
import { columnProblems, infinityTargets, interpolate, type InfinityUse, type Interpolation } from './infinity-targets.js';
import { lint, provisionedDatasources, strings } from './lint.js';

type Json = Record<string, any>;

const committed = (file: string) => readFileSync(new URL(`../../dashboards/${file}`, import.meta.url), 'utf8');
const DASHBOARD_JSON: Record<string, Json> = Object.fromEntries(Object.keys(DASHBOARDS).map((file) => [file, JSON.parse(committed(file))]));
const PROVISIONED = provisionedDatasources(new URL('../../dashboards/provisioning/datasources/cachebreak.yaml', import.meta.url));

describe('dashboards as code', () => {
  it.each(Object.keys(DASHBOARDS))('%s is what `npm run dashboards` writes now', (file) => {
    expect(committed(file)).toBe(render(DASHBOARDS[file]!));
  });

  it('type-check against Grafana\'s dashboard types (@grafana/schema)', () => {
    expect(dashboardTypeErrors(DASHBOARD_JSON)).toBe('');
  });

  it('the type check catches a missing gridPos member, a bad enum value and a misspelt field', () => {
    const bad = structuredClone(DASHBOARD_JSON['cachebreak-overview.json']!);
    bad.panels[1].gridPos = { h: 4 };
    bad.graphTooltip = 7;
    bad.panels[2].titel = 'typo';
    const errors = dashboardTypeErrors({ bad });
    expect(errors).toMatch(/Type '\{ h: number; \}' is missing the following properties from type .*: w, x, y/);
    expect(errors).toContain("Type '7' is not assignable to type 'DashboardCursorSync");
    expect(errors).toContain("'\"titel\"' does not exist");
  });

  it.each(Object.keys(DASHBOARDS))('%s: provisioned datasources, defined variables, unique panel ids and refIds', (file) => {
    expect(lint(DASHBOARD_JSON[file]!, PROVISIONED)).toEqual([]);
  });

  it('the lints catch an unknown datasource, an undefined variable and a repeated id', () => {
    const bad = structuredClone(DASHBOARD_JSON['cachebreak-breaks.json']!);
    bad.panels[1].datasource = { type: 'prometheus', uid: 'nope' };
    bad.panels[1].targets[0].url += '&x=${nosuchvar}';
    bad.panels[2].id = bad.panels[1].id;
    const problems = lint(bad, PROVISIONED).join('\n');
    expect(problems).toContain('uid "nope" is not provisioned');
    expect(problems).toContain('"${nosuchvar}" is neither a variable');
    expect(problems).toContain(`panel id ${bad.panels[1].id} is used twice`);
  });

  it('links sessions to the drill-down: every /d/<uid> link names a dashboard here and one of its variables', () => {
    const byUid = new Map(Object.values(DASHBOARD_JSON).map((d) => [d.uid, d]));
    const links = Object.values(DASHBOARD_JSON).flatMap((d) => [...strings(d)].flatMap(([text]) => [...text.matchAll(/\/d\/([\w-]+)\?([^"\s]*)/g)]));
    expect(links.length).toBeGreaterThanOrEqual(3);
    for (const [link, uid, query] of links) {
      const target = byUid.get(uid!);
      expect(target, link).toBeDefined();
      const names = new Set(target!.templating.list.map((v: Json) => v.name));
      for (const [, name] of query!.matchAll(/var-(\w+)=/g)) expect(names.has(name), `${link}: var-${name}`).toBe(true);
    }
  });

  it('has the five dashboards with fixed uids, and the provisioning defines their datasources', () => {
    expect(Object.values(DASHBOARD_JSON).map((d) => d.uid)).toEqual(['cachebreak-overview', 'cachebreak-breaks', 'cachebreak-session', 'cachebreak-prometheus', 'cachebreak-insights']);
    expect([...PROVISIONED]).toEqual([
      ['cachebreak-infinity', 'yesoreyeram-infinity-datasource'],
      ['cachebreak-prometheus', 'prometheus'],
    ]);
  });
});

/** A value each variable takes in the "one value" run: one with data in every panel of the demo. */
const ONE_VALUE: Record<string, (values: string[]) => string | undefined> = {
  model: (values) => values.find((v) => v === 'claude-sonnet-4-5'),
  provider: (values) => values.find((v) => v === 'anthropic'),
  agentId: (values) => values.find((v) => v === 'main'),
  reason: (values) => values.find((v) => v === 'tools_order_changed'),
  sessionId: (values) => values.find((v) => v.startsWith('refactor-auth-')),
};

describe('every Infinity query in every dashboard, against the demo database', () => {
  // Each test's database is removed after it (helpers.ts): one demo load per dashboard.
  let app: Awaited<ReturnType<typeof demoApp>>;

  async function run(target: Json, at: Interpolation): Promise<{ url: string; status: number; body: unknown }> {
    const url = interpolate(target.url, at);
    expect(url.startsWith('/grafana/'), url).toBe(true);
    const response = await app.app.request(url);
    return { url, status: response.status, body: await response.json() };
  }

  /** Each variable's values, from its own query over the demo's range. */
  async function variableValues(dashboard: Json): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const variable of dashboard.templating.list) {
      if (!variable.query?.infinityQuery) continue;
      const { url, status, body } = await run(variable.query.infinityQuery, { ...DEMO_RANGE, intervalMs: 60_000, variables: {} });
      expect(status, `${variable.name}: GET ${url} → ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
      out[variable.name] = (body as { value: string }[]).map((row) => row.value);
    }
    return out;
  }

  const SELECTIONS = ['All', 'one value', 'several values'] as const;

  for (const file of Object.keys(DASHBOARDS)) {
    const dashboard = DASHBOARD_JSON[file]!;
    const uses = infinityTargets(dashboard);
    // The Prometheus dashboard's queries run against a real Prometheus (test/e2e/prometheus-dashboard.test.ts).
    if (uses.length === 0) continue;
    it(`${file}: every target, with each variable at All, at one value and at several`, async () => {
      app = await demoApp();
      const values = await variableValues(dashboard);
      for (const selection of SELECTIONS) await runAll(dashboard, uses, values, selection);
    });
  }

  async function runAll(dashboard: Json, uses: InfinityUse[], values: Record<string, string[]>, selection: (typeof SELECTIONS)[number]) {
    const variables: Record<string, string | string[]> = {};
    for (const variable of dashboard.templating.list) {
      const list = values[variable.name] ?? [];
      expect(list.length, `variable ${variable.name} lists values`).toBeGreaterThan(0);
      // Without "All", Grafana starts on the first value listed.
      let value: string | string[] = variable.includeAll ? variable.allValue : list[0]!;
      if (selection === 'one value' || (selection === 'several values' && !variable.multi)) {
        const one = ONE_VALUE[variable.name]!(list);
        expect(one, `a value for ${variable.name} in ${JSON.stringify(list)}`).toBeDefined();
        value = [one!];
      } else if (selection === 'several values' && variable.name === 'model') {
        value = ['claude-sonnet-4-5', 'claude-opus-4-5'];
      }
      variables[variable.name] = value;
    }
    for (const { where, target } of uses) {
      const { url, status, body } = await run(target, { ...DEMO_RANGE, intervalMs: 60_000, variables });
      expect(status, `${selection}: ${where}: GET ${url} → ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
      expect(columnProblems(body, target.columns), `${selection}: ${where}: GET ${url}`).toEqual([]);
    }
  }
});
