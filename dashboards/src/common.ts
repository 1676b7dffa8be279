// What every cachebreak dashboard shares: variables over the data in range,
// the break annotations, links between the dashboards, panel defaults.
import * as common from '@grafana/grafana-foundation-sdk/common';
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DashboardLinkBuilder,
  DashboardLinkType,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { INFINITY } from './datasources.js';
import { endpoint, InfinityQueryBuilder, variable } from './infinity.js';

export const TAG = 'cachebreak';

export const UIDS = {
  overview: 'cachebreak-overview',
  breaks: 'cachebreak-breaks',
  session: 'cachebreak-session',
  prometheus: 'cachebreak-prometheus',
  insights: 'cachebreak-insights',
} as const;

export function dashboard(uid: string, title: string, description: string): DashboardBuilder {
  return new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags([TAG])
    .time({ from: 'now-24h', to: 'now' })
    .refresh('1m')
    .timezone('browser')
    .link(new DashboardLinkBuilder('cachebreak').type(DashboardLinkType.Dashboards).tags([TAG]).asDropdown(true).includeVars(true).keepTime(true));
}

/** A dashboard variable over the values seen in the time range (GET /grafana/values). */
export function valuesVariable(name: string, label: string, options: { multi: boolean } = { multi: true }): QueryVariableBuilder {
  const query = new InfinityQueryBuilder(endpoint('values', { dimension: name })).refId('variable').column('value', 'string');
  const builder = new QueryVariableBuilder(name)
    .label(label)
    .datasource(INFINITY)
    .query({ queryType: 'infinity', refId: 'variable', infinityQuery: query.build() })
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc);
  // "All" is sent as * rather than every value listed: short URLs, and values that appear later are included.
  return options.multi ? builder.multi(true).includeAll(true).allValue('*') : builder;
}

/** Every break in range as a marker on the time series, filtered by the variables given. */
export function breakAnnotations(filters: Record<string, string>): AnnotationQueryBuilder {
  const query = new InfinityQueryBuilder(endpoint('annotations', filters))
    .refId('Anno')
    .format('dataframe')
    .time()
    .column('text', 'string')
    .column('title', 'string')
    .column('tags', 'string');
  return new AnnotationQueryBuilder().name('Cache breaks').datasource(INFINITY).enable(true).iconColor('red').target(query);
}

export const filterVariables = (...names: string[]) => Object.fromEntries(names.map((name) => [name, variable(name)]));

export function legend(): common.VizLegendOptionsBuilder {
  return new common.VizLegendOptionsBuilder().showLegend(true).displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom).calcs([]);
}

export function lastValue(): common.ReduceDataOptionsBuilder {
  return new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);
}

export function stacked(): common.StackingConfigBuilder {
  return new common.StackingConfigBuilder().mode(common.StackingMode.Normal);
}

/** Names each series of a long frame by its label (Infinity adds the value column's name otherwise). */
export const seriesName = (label: string) => `\${__field.labels.${label}}`;

/**
 * The SDK leaves panel ids unset: number panels (rows included) in layout
 * order. It also gives every variable the interval variable's auto fields,
 * which Grafana's dashboard schema has only on interval variables.
 */
export function finished(built: Dashboard): Dashboard {
  built.panels?.forEach((panel, i) => (panel.id = i + 1));
  for (const variable of built.templating.list ?? []) {
    if (variable.type === 'interval') continue;
    delete variable.auto;
    delete variable.auto_min;
    delete variable.auto_count;
  }
  return built;
}

/** A link from a table's sessionId cell to the session drill-down, keeping the time range. */
export const sessionLink = {
  id: 'links',
  value: [{ title: 'Session drill-down', url: `/d/${UIDS.session}?var-sessionId=\${__value.raw}&\${__url_time_range}` }],
};
