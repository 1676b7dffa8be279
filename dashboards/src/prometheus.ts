// "Prompt cache (Prometheus)": the same questions answered from /metrics for
// users who scrape instead. Ratios are computed in PromQL from counters
// (never a pre-computed ratio gauge), so they aggregate correctly.
import * as common from '@grafana/grafana-foundation-sdk/common';
import { AnnotationQueryBuilder, QueryVariableBuilder, RowBuilder, VariableRefresh, VariableSort, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder as PromQuery } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as Stat } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as Timeseries } from '@grafana/grafana-foundation-sdk/timeseries';
import { dashboard, lastValue, legend, finished, stacked, UIDS } from './common.js';
import { PROMETHEUS } from './datasources.js';

const MATCH = 'project=~"$project", model=~"$model", provider=~"$provider"';
const INPUT_KINDS = 'uncached_input|cache_read|cache_write';

const tokens = (kind: string) => `cachebreak_tokens_total{${MATCH}, kind=~"${kind}"}`;

/** Σ read / Σ (uncached + read + write) over a window, optionally per label. */
function cacheRate(window: string, by = ''): string {
  const sum = by ? `sum by (${by})` : 'sum';
  return `${sum} (increase(${tokens('cache_read')}[${window}])) / ${sum} (increase(${tokens(INPUT_KINDS)}[${window}]))`;
}

function prom(expr: string, legendFormat = '__auto', refId = 'A'): PromQuery {
  return new PromQuery().datasource(PROMETHEUS).expr(expr).legendFormat(legendFormat).refId(refId).range();
}

function labelVariable(name: string, label: string): QueryVariableBuilder {
  return new QueryVariableBuilder(name)
    .label(label)
    .datasource(PROMETHEUS)
    .query({ query: `label_values(cachebreak_tokens_total, ${name})`, refId: 'PrometheusVariableQueryEditor-VariableQuery', qryType: 1 })
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue('.*');
}

function stat(title: string, expr: string, unit: string, description: string): Stat {
  return new Stat()
    .title(title)
    .description(description)
    .datasource(PROMETHEUS)
    .withTarget(prom(expr).instant())
    .unit(unit)
    .reduceOptions(lastValue())
    .graphMode(common.BigValueGraphMode.None)
    .height(4)
    .span(4);
}

function series(title: string, expr: string, legendFormat: string, unit: string, description: string): Timeseries {
  return new Timeseries().title(title).description(description).datasource(PROMETHEUS).withTarget(prom(expr, legendFormat)).unit(unit).legend(legend());
}

export function prometheus(): Dashboard {
  return finished(
    dashboard(UIDS.prometheus, 'Prompt cache (Prometheus)', 'The cachebreak counters scraped from /metrics: cache rate, tokens, breaks and their cost, as rates.')
      .withVariable(labelVariable('project', 'Project'))
      .withVariable(labelVariable('model', 'Model'))
      .withVariable(labelVariable('provider', 'Provider'))
      .annotation(
        new AnnotationQueryBuilder()
          .name('Cache breaks')
          .datasource(PROMETHEUS)
          .enable(true)
          .iconColor('red')
          .target(prom(`sum by (reason) (increase(cachebreak_breaks_total{${MATCH}}[$__interval])) > 0`, '{{reason}}', 'Anno'))
          .step('$__interval')
          .titleFormat('Cache break')
          .textFormat('{{reason}}')
          .tagKeys('reason'),
      )
      .withRow(new RowBuilder('Over the time range'))
      .withPanel(stat('Cache rate', cacheRate('$__range'), 'percentunit', 'Σ read / Σ (uncached + read + write) over the range: writes count.'))
      .withPanel(stat('Cache breaks', `sum (increase(cachebreak_breaks_total{${MATCH}}[$__range]))`, 'short', 'Breaks detected in the range.'))
      .withPanel(
        stat('Missed cache-read tokens', `sum (increase(cachebreak_missed_cache_read_tokens_total{${MATCH}}[$__range]))`, 'short', 'Tokens paid again at cache-write price.'),
      )
      .withPanel(
        stat(
          'Estimated extra cost',
          `sum (increase(cachebreak_estimated_extra_cost_usd_total{${MATCH}}[$__range]))`,
          'currencyUSD',
          'Summed over the breaks of models with a known price; the others are counted in Unpriced breaks.',
        ),
      )
      .withPanel(
        // No series at all means no unpriced break: 0, not "no data".
        stat(
          'Unpriced breaks',
          `sum (increase(cachebreak_breaks_unpriced_total{${MATCH}}[$__range])) or vector(0)`,
          'short',
          'Breaks of models with no known price: their cost is unknown, not $0, and is not in Estimated extra cost.',
        ),
      )
      .withPanel(
        stat(
          'Usage waiting',
          'sum (cachebreak_usage_waiting{project=~"$project"})',
          'short',
          'Usage records stored but waiting for the snapshot or session that places them, now: in no other figure until they join.',
        ),
      )
      .withPanel(
        stat(
          'Cut request bodies',
          'sum (increase(cachebreak_bodies_truncated_total{project=~"$project"}[$__range])) or vector(0)',
          'short',
          "Request bodies cut by the harness's content limit (Claude Code: CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH, 61,440 characters by default), whose snapshots hold only what came before the cut: raise the limit.",
        ),
      )
      .withRow(new RowBuilder('Rates'))
      .withPanel(
        series('Cache rate by model (writes counted)', cacheRate('$__rate_interval', 'model'), '{{model}}', 'percentunit', 'Computed from the token counters.').min(0).max(1),
      )
      .withPanel(
        series('Tokens by kind', `sum by (kind) (rate(${tokens('.+')}[$__rate_interval]))`, '{{kind}}', 'short', 'Tokens per second.')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked()),
      )
      .withPanel(
        series('Breaks by reason', `sum by (reason) (increase(cachebreak_breaks_total{${MATCH}}[$__rate_interval]))`, '{{reason}}', 'short', 'Breaks per interval.')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked()),
      )
      .withPanel(
        series(
          'Extra cost by model',
          `sum by (model) (increase(cachebreak_estimated_extra_cost_usd_total{${MATCH}}[$__rate_interval]))`,
          '{{model}}',
          'currencyUSD',
          'Estimated extra cost of breaks per interval.',
        ),
      )
      .withPanel(
        series('Turns by state', `sum by (state) (rate(cachebreak_turns_total{${MATCH}}[$__rate_interval]))`, '{{state}}', 'reqps', 'Turns per second, by the state first given.'),
      )
      .withPanel(
        series(
          'Events by receiver and outcome',
          'sum by (receiver, outcome) (rate(cachebreak_events_total[$__rate_interval]))',
          '{{receiver}} {{outcome}}',
          'short',
          'Accepted, duplicate and rejected events per second.',
        ),
      )
      .build(),
  );
}
