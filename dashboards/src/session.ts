// "Session drill-down": one session's turns in order — the state of each,
// what it read from and wrote to the cache, and at every miss the break
// with its reason and changed tools.
import * as common from '@grafana/grafana-foundation-sdk/common';
import { MappingType, RowBuilder, VariableSort, type Dashboard, type ValueMapping } from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as Stat } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as StateTimeline } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as Table } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as Timeseries } from '@grafana/grafana-foundation-sdk/timeseries';
import { breakAnnotations, dashboard, filterVariables, lastValue, legend, finished, stacked, UIDS, valuesVariable } from './common.js';
import { INFINITY } from './datasources.js';
import { endpoint, InfinityQueryBuilder } from './infinity.js';

const SESSION = filterVariables('sessionId');

/** One colour per turn state (SPEC §4.1), the same in the timeline and the table. */
const STATES: ValueMapping[] = [
  {
    type: MappingType.ValueToText,
    options: {
      hit: { color: 'green', index: 0 },
      miss: { color: 'red', index: 1 },
      cold: { color: 'blue', index: 2 },
      expected: { color: 'orange', index: 3 },
      uncached: { color: 'purple', index: 4 },
      unreported: { color: 'text', index: 5 },
      pending: { color: 'text', index: 6 },
    },
  },
];

function stat(title: string, column: string, unit: string, span = 5): Stat {
  return new Stat()
    .title(title)
    .datasource(INFINITY)
    .withTarget(new InfinityQueryBuilder(endpoint('sessions', { order: 'recent', limit: '1', ...SESSION })).column(column, 'number'))
    .unit(unit)
    .reduceOptions(lastValue())
    .graphMode(common.BigValueGraphMode.None)
    .height(4)
    .span(span);
}

export function session(): Dashboard {
  const turns = () => new InfinityQueryBuilder(endpoint('turns', SESSION, false));
  return finished(
    dashboard(UIDS.session, 'Session drill-down', "One session's turns in order: state, cache read and write per turn, and the break and its reason at each miss.")
      .withVariable(valuesVariable('sessionId', 'Session', { multi: false }).sort(VariableSort.Disabled))
      .annotation(breakAnnotations(SESSION))
      .withRow(new RowBuilder('Session'))
      .withPanel(stat('Cache rate', 'cacheRate', 'percentunit', 4))
      .withPanel(stat('Turns', 'turns', 'short'))
      .withPanel(stat('Cache breaks', 'breaks', 'short'))
      .withPanel(
        stat('Estimated extra cost', 'estimatedExtraCostUsd', 'currencyUSD')
          .description('Summed over the breaks of models with a known price. No value: every break is unpriced.')
          .noValue('unknown'),
      )
      .withPanel(stat('Unpriced breaks', 'unpricedBreaks', 'short').description('Breaks of models with no known price: an unknown cost, not $0.'))
      .withPanel(
        new StateTimeline()
          .title('State per turn')
          .description('hit, miss (a break), cold, expected (a declared reset), uncached, unreported.')
          .datasource(INFINITY)
          // A table frame: as a time series, Infinity would take the state for a series label.
          .withTarget(turns().time().column('state', 'string'))
          .mappings(STATES)
          .legend(legend())
          .height(5)
          .span(24),
      )
      .withPanel(
        new Timeseries()
          .title('Cache read and write per turn')
          .description('A miss shows as a turn that writes what the turn before it read.')
          .datasource(INFINITY)
          .withTarget(turns().format('timeseries').time().column('read', 'number').column('write', 'number').column('uncached', 'number'))
          .unit('short')
          .drawStyle(common.GraphDrawStyle.Bars)
          .fillOpacity(80)
          .stacking(stacked())
          .legend(legend())
          .span(24),
      )
      .withRow(new RowBuilder('Turns'))
      .withPanel(
        new Table()
          .title('Turns')
          .description('In request order; break columns are filled at each miss.')
          .datasource(INFINITY)
          .withTarget(
            turns()
              .column('seq', 'number', '#')
              .time()
              .column('agentId', 'string', 'agent')
              .column('model', 'string')
              .column('state', 'string')
              .column('read', 'number')
              .column('write', 'number')
              .column('uncached', 'number')
              .column('output', 'number')
              .column('cacheRate', 'number', 'cache rate')
              .column('reason', 'string')
              .column('cause', 'string')
              .column('changedToolNames', 'string', 'changed tools')
              .column('missedCacheReadTokens', 'number', 'missed cache-read tokens')
              .column('estimatedExtraCostUsd', 'number', 'extra cost')
              .column('expectMiss', 'string', 'expected because')
              .column('requestId', 'string', 'request'),
          )
          .overrideByName('state', [
            { id: 'mappings', value: STATES },
            { id: 'custom.cellOptions', value: { type: common.TableCellDisplayMode.ColorText } },
          ])
          .overrideByName('cache rate', [{ id: 'unit', value: 'percentunit' }])
          .overrideByName('extra cost', [{ id: 'unit', value: 'currencyUSD' }])
          .height(16)
          .span(24),
      )
      .build(),
  );
}
