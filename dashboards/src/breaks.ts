// "Cache breaks": every break with what changed (changedToolNames), the
// reasons and causes behind them, the tools that break caches most, how often
// the harness's own reports and the provider agree, and the sessions that
// suffer most, each linked to its drill-down.
import * as common from '@grafana/grafana-foundation-sdk/common';
import { RowBuilder, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as BarGauge } from '@grafana/grafana-foundation-sdk/bargauge';
import * as piechart from '@grafana/grafana-foundation-sdk/piechart';
import { PanelBuilder as Table } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as Timeseries } from '@grafana/grafana-foundation-sdk/timeseries';
import { breakAnnotations, dashboard, filterVariables, legend, finished, seriesName, sessionLink, stacked, UIDS, valuesVariable } from './common.js';
import { INFINITY } from './datasources.js';
import { endpoint, InfinityQueryBuilder } from './infinity.js';

const FILTERS = filterVariables('model', 'provider', 'agentId', 'reason');
/** Sessions are kept per agent, not per model: their panels take the agent only. */
const SESSION_FILTERS = filterVariables('agentId');

const unit = (value: string) => ({ id: 'unit', value });
/** An empty cost cell is an unknown price (SPEC §4.10), never $0. */
const unknownPrice = { id: 'noValue', value: 'unknown price' };

function sessionsTable(title: string, order: 'worst_cache_rate' | 'extra_cost', description: string): Table {
  return new Table()
    .title(title)
    .description(description)
    .datasource(INFINITY)
    .withTarget(
      new InfinityQueryBuilder(endpoint('sessions', { order, limit: '20', ...SESSION_FILTERS }))
        .column('sessionId', 'string', 'session')
        .column('agentIds', 'string', 'agents')
        .column('turns', 'number')
        .column('breaks', 'number')
        .column('cacheRate', 'number', 'cache rate')
        .column('estimatedExtraCostUsd', 'number', 'extra cost')
        .column('unpricedBreaks', 'number', 'unpriced breaks')
        .column('lastSeen', 'timestamp_epoch', 'last seen'),
    )
    .overrideByName('session', [sessionLink])
    .overrideByName('cache rate', [unit('percentunit')])
    .overrideByName('extra cost', [unit('currencyUSD'), unknownPrice])
    .span(12);
}

export function breaks(): Dashboard {
  return finished(
    dashboard(UIDS.breaks, 'Cache breaks', 'Every prompt cache break with its reason and changed tools, the causes behind them, and the sessions that lose most.')
      .withVariable(valuesVariable('model', 'Model'))
      .withVariable(valuesVariable('provider', 'Provider'))
      .withVariable(valuesVariable('agentId', 'Agent'))
      .withVariable(valuesVariable('reason', 'Reason'))
      .annotation(breakAnnotations(FILTERS))
      .withRow(new RowBuilder('Why the cache broke'))
      .withPanel(
        new piechart.PanelBuilder()
          .title('Breaks by reason')
          .description('The first change found in prefix order, per break.')
          .datasource(INFINITY)
          .withTarget(new InfinityQueryBuilder(endpoint('totals', { groupBy: 'reason', ...FILTERS })).column('reason', 'string').column('breaks', 'number'))
          .reduceOptions(new common.ReduceDataOptionsBuilder().values(true).calcs([]).fields('/^breaks$/'))
          .pieType(piechart.PieChartType.Donut)
          .displayLabels([piechart.PieChartLabels.Percent])
          .legend(new piechart.PieChartLegendOptionsBuilder().showLegend(true).displayMode(common.LegendDisplayMode.Table).placement(common.LegendPlacement.Right).values([piechart.PieChartLegendValues.Value]).calcs([]))
          .span(8),
      )
      .withPanel(
        new Table()
          .title('Reasons and causes')
          .description(
            'For breaks where nothing changed: ttl_expired (the gap outlived the TTL) or likely_server_eviction. Extra cost sums the breaks with a known price; unpriced breaks are counted apart.',
          )
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('break-causes', filterVariables('model', 'provider', 'agentId', 'reason')))
              .column('reason', 'string')
              .column('cause', 'string')
              .column('breaks', 'number')
              .column('missedCacheReadTokens', 'number', 'missed cache-read tokens')
              .column('estimatedExtraCostUsd', 'number', 'extra cost')
              .column('unpricedBreaks', 'number', 'unpriced breaks'),
          )
          .overrideByName('extra cost', [unit('currencyUSD'), unknownPrice])
          .span(8),
      )
      .withPanel(
        new BarGauge()
          .title('Top changed tools')
          .description('Tools named in changedToolNames: added, removed, re-hashed or moved.')
          .datasource(INFINITY)
          .withTarget(new InfinityQueryBuilder(endpoint('changed-tools', { limit: '15', ...FILTERS })).column('tool', 'string').column('breaks', 'number'))
          .reduceOptions(new common.ReduceDataOptionsBuilder().values(true).calcs([]).fields('/^breaks$/'))
          .displayMode(common.BarGaugeDisplayMode.Basic)
          .orientation(common.VizOrientation.Horizontal)
          .span(8),
      )
      .withPanel(
        new Timeseries()
          .title('Breaks over time by reason')
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('breaks-over-time', { interval: '${__interval_ms}', groupBy: 'reason', ...FILTERS }))
              .format('timeseries')
              .time()
              .column('reason', 'string')
              .column('breaks', 'number'),
          )
          .displayName(seriesName('reason'))
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked())
          .legend(legend())
          .span(24),
      )
      .withRow(new RowBuilder('Breaks'))
      .withPanel(
        new Table()
          .title('Breaks')
          .description('Newest first. A session opens its drill-down.')
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('breaks', { limit: '500', ...filterVariables('model', 'provider', 'agentId', 'reason') }))
              .time()
              .column('sessionId', 'string', 'session')
              .column('agentId', 'string', 'agent')
              .column('model', 'string')
              .column('reason', 'string')
              .column('cause', 'string')
              .column('changedToolNames', 'string', 'changed tools')
              .column('missedCacheReadTokens', 'number', 'missed cache-read tokens')
              .column('estimatedExtraCostUsd', 'number', 'extra cost')
              .column('harnessReason', 'string', 'harness says')
              .column('harnessAgrees', 'string', 'agrees'),
          )
          .overrideByName('session', [sessionLink])
          .overrideByName('extra cost', [unit('currencyUSD'), unknownPrice])
          .height(12)
          .span(24),
      )
      .withRow(new RowBuilder('Other verdicts'))
      .withPanel(
        new Table()
          .title('Agreement with cachebreak')
          .description(
            "How often the harness's own reports (Claude Code's [PROMPT CACHE BREAK] lines, followed by tail) and the provider's cache_miss_reason name cachebreak's reason. Unjoined reports: breaks the harness saw that cachebreak has no record of.",
          )
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('agreement', FILTERS))
              .column('source', 'string')
              .column('compared', 'number', 'breaks compared')
              .column('agreed', 'number')
              .column('rate', 'number', 'agreement')
              .column('unjoinedReports', 'number', 'unjoined reports'),
          )
          .overrideByName('agreement', [unit('percentunit')])
          .span(10),
      )
      .withPanel(
        new Table()
          .title('Verdicts: cachebreak, harness, provider')
          .description('Breaks by the three verdicts on them, in shared terms (tools_changed, no_change…); none: that side gave no verdict.')
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('verdicts', FILTERS))
              .column('cachebreak', 'string')
              .column('harness', 'string')
              .column('provider', 'string')
              .column('breaks', 'number'),
          )
          .span(14),
      )
      .withRow(new RowBuilder('Sessions'))
      .withPanel(sessionsTable('Worst sessions by cache rate', 'worst_cache_rate', 'Lowest cache rate first (writes counted).'))
      .withPanel(sessionsTable('Sessions by extra cost', 'extra_cost', 'Most estimated extra cost (breaks with a known price) first.'))
      .build(),
  );
}
