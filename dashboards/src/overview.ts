// "Prompt cache overview": how much of the input the cache served (writes
// counted), where the tokens went, why the cache broke and what it cost,
// with every break marked on the time series.
import * as common from '@grafana/grafana-foundation-sdk/common';
import { RowBuilder, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as Stat } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as Timeseries } from '@grafana/grafana-foundation-sdk/timeseries';
import { breakAnnotations, dashboard, filterVariables, lastValue, legend, finished, seriesName, stacked, UIDS, valuesVariable } from './common.js';
import { INFINITY } from './datasources.js';
import { endpoint, InfinityQueryBuilder } from './infinity.js';

const FILTERS = filterVariables('model', 'provider', 'agentId');
const INTERVAL = { interval: '${__interval_ms}' };

function stat(title: string, column: string, unit: string, description: string): Stat {
  return new Stat()
    .title(title)
    .description(description)
    .datasource(INFINITY)
    .withTarget(new InfinityQueryBuilder(endpoint('summary', FILTERS)).column(column, 'number'))
    .unit(unit)
    .reduceOptions(lastValue())
    .graphMode(common.BigValueGraphMode.None)
    .height(4)
    .span(4);
}

function cacheRate(title: string, groupBy: 'none' | 'model' | 'provider' | 'agentId', description: string): Timeseries {
  const query = new InfinityQueryBuilder(endpoint('cache-rate', { ...INTERVAL, groupBy, ...FILTERS })).format('timeseries').time();
  if (groupBy !== 'none') query.column(groupBy, 'string');
  const panel = new Timeseries()
    .title(title)
    .description(description)
    .datasource(INFINITY)
    .withTarget(query.column('cacheRate', 'number', groupBy === 'none' ? 'cache rate' : 'cacheRate'))
    .unit('percentunit')
    .min(0)
    .max(1)
    // null is "no data": a gap in the line, never a drop to 0 %.
    .spanNulls(false)
    .legend(legend());
  return groupBy === 'none' ? panel : panel.displayName(seriesName(groupBy));
}

export function overview(): Dashboard {
  return finished(
    dashboard(UIDS.overview, 'Prompt cache overview', 'Cache rate with writes counted, tokens by kind, breaks by reason and their estimated extra cost.')
      .withVariable(valuesVariable('model', 'Model'))
      .withVariable(valuesVariable('provider', 'Provider'))
      .withVariable(valuesVariable('agentId', 'Agent'))
      .annotation(breakAnnotations(FILTERS))
      .withRow(new RowBuilder('Summary'))
      .withPanel(
        stat(
          'Cache rate',
          'cacheRate',
          'percentunit',
          'Σ read / Σ (uncached + read + write): cache writes count as input the cache did not serve. Turns whose usage reported no cache field are left out.',
        ),
      )
      .withPanel(stat('Turns', 'turns', 'short', 'Model requests with usage.'))
      .withPanel(stat('Cache breaks', 'breaks', 'short', 'Turns that read less than the previous turn left in the cache.'))
      .withPanel(stat('Missed cache-read tokens', 'missedCacheReadTokens', 'short', 'Tokens that were paid again at cache-write price.'))
      .withPanel(
        stat(
          'Estimated extra cost',
          'estimatedExtraCostUsd',
          'currencyUSD',
          'What the breaks cost over reading from the cache, summed over the breaks of models with a known price; the others are counted in Unpriced breaks. No value: every break is unpriced.',
        ).noValue('unknown'),
      )
      .withPanel(stat('Unpriced breaks', 'unpricedBreaks', 'short', 'Breaks of models with no known price: their cost is unknown, not $0, and is not in Estimated extra cost.'))
      .withRow(new RowBuilder('Cache rate'))
      .withPanel(cacheRate('Cache rate (writes counted)', 'none', 'Sum over sums per bucket; gaps where no turn reported cache usage.').span(24))
      .withPanel(cacheRate('Cache rate by model', 'model', 'One line per model.'))
      .withPanel(cacheRate('Cache rate by agent', 'agentId', 'Main agents and subagents: each agent has its own cache lineage.'))
      .withRow(new RowBuilder('Tokens and breaks'))
      .withPanel(
        new Timeseries()
          .title('Tokens by kind')
          .description(
            'Input not served by the cache (uncached), read from it (read), written to it (write), and output; unreported_input: input of turns whose usage reported no cache field (outside the cache rate).',
          )
          .datasource(INFINITY)
          .withTarget(new InfinityQueryBuilder(endpoint('tokens', { ...INTERVAL, ...FILTERS })).format('timeseries').time().column('kind', 'string').column('tokens', 'number'))
          .displayName(seriesName('kind'))
          .unit('short')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked())
          .legend(legend()),
      )
      .withPanel(
        new Timeseries()
          .title('Breaks by reason')
          .description('The first change found in prefix order: model, tools, system, cache_control, messages; or a TTL / eviction when nothing changed.')
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('breaks-over-time', { ...INTERVAL, groupBy: 'reason', ...FILTERS }))
              .format('timeseries')
              .time()
              .column('reason', 'string')
              .column('breaks', 'number'),
          )
          .displayName(seriesName('reason'))
          .unit('short')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked())
          .legend(legend()),
      )
      .withPanel(
        new Timeseries()
          .title('Estimated extra cost by model')
          .description('What each bucket’s breaks cost over reading from the cache; models with no known price have no bars (see Unpriced breaks).')
          .datasource(INFINITY)
          .withTarget(
            new InfinityQueryBuilder(endpoint('breaks-over-time', { ...INTERVAL, groupBy: 'model', ...FILTERS }))
              .format('timeseries')
              .time()
              .column('model', 'string')
              .column('estimatedExtraCostUsd', 'number'),
          )
          .displayName(seriesName('model'))
          .unit('currencyUSD')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked())
          .legend(legend())
          .span(24),
      )
      .build(),
  );
}
