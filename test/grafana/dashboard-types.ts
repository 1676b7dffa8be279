// Checks dashboard JSON against Grafana's own dashboard types (@grafana/schema)
// by compiling it as a typed object literal with the project's TypeScript:
// a misspelt field, a wrong enum value or a missing gridPos member fails to
// compile. Plugin queries stay open objects, as in Grafana's schema.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

const PRELUDE = `import type { AnnotationQuery, Dashboard, DataQuery, Panel, RowPanel, VariableModel } from '@grafana/schema';
type Query = DataQuery & Record<string, unknown>;
type CheckedPanel = Omit<Panel, 'targets'> & { targets?: Query[] };
// Grafana lets a datasource spread its annotation fields (Prometheus: step, titleFormat…) into the annotation itself.
type CheckedAnnotation = Omit<AnnotationQuery, 'target'> & { target?: Query } & Record<string, unknown>;
type CheckedDashboard = Omit<Dashboard, 'panels' | 'annotations' | 'templating'> & {
  panels?: (CheckedPanel | RowPanel)[];
  annotations?: { list?: CheckedAnnotation[] };
  templating?: { list?: VariableModel[] };
};
// JSON holds an enum's value, never the enum: compare string enums by their values.
type AsJson<T> = T extends string ? \`\${T}\` : T extends readonly (infer U)[] ? AsJson<U>[] : T extends object ? { [K in keyof T]: AsJson<T[K]> } : T;
`;

/** Compiler messages for each dashboard that does not type-check; empty when all do. */
export function dashboardTypeErrors(dashboards: Record<string, unknown>): string {
  // Inside node_modules, so that '@grafana/schema' resolves from the project.
  const dir = join(ROOT, 'node_modules', '.cache', `cachebreak-dashboard-types-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const files = Object.entries(dashboards).map(([name, json], i) => {
      const file = join(dir, `d${i}.ts`);
      writeFileSync(file, `// ${name}\n${PRELUDE}export const dashboard: AsJson<CheckedDashboard> = ${JSON.stringify(json, null, 2)};\n`);
      return file;
    });
    const config = {
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] },
      files,
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
    const result = spawnSync(TSC, ['-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
    if (result.error) throw result.error;
    return result.status === 0 ? '' : `${result.stdout}${result.stderr}`.trim() || `tsc exited with ${result.status}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
