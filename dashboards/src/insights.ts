// "Cache insights": what to change and what it would have saved
// (docs/insights.md): avoidable breaks, volatile prefix parts, fan-out cold
// starts, TTL advice, chronic misses, and the agreement confusion tables.
import { RowBuilder, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as Table } from '@grafana/grafana-foundation-sdk/table';
import { dashboard, filterVariables, finished, sessionLink, UIDS, valuesVariable } from './common.js';
import { INFINITY } from './datasources.js';
import { endpoint, InfinityQueryBuilder, type InfinityColumnType } from './infinity.js';

const ALL = filterVariables('model', 'provider', 'agentId');
const STREAMS = filterVariables('agentId');

const unit = (value: string) => ({ id: 'unit', value });
/** An empty dollar cell is an unknown price (SPEC §4.10), never $0. */
const unknownPrice = { id: 'noValue', value: 'unknown price' };

function table(title: string, description: string, query: string, params: Record<string, string>, columns: [string, InfinityColumnType, string?][], span = 24): Table {
  const target = new InfinityQueryBuilder(endpoint(query, params));
  for (const [selector, type, text] of columns) target.column(selector, type, text);
  return new Table().title(title).description(description).datasource(INFINITY).withTarget(target).span(span);
}

export function insights(): Dashboard {
  return finished(
    dashboard(UIDS.insights, 'Cache insights', 'What to change, and what it would have saved: avoidable breaks, volatile prompt parts, fan-out cold starts, TTL advice, chronic misses.')
      .time({ from: 'now-7d', to: 'now' })
      .withVariable(valuesVariable('model', 'Model'))
      .withVariable(valuesVariable('provider', 'Provider'))
      .withVariable(valuesVariable('agentId', 'Agent'))
      .withRow(new RowBuilder('What to change'))
      .withPanel(
        table('Avoidable breaks', 'Breaks a known fix would have prevented, and what each fix would have saved (the priced breaks; unpriced counted apart).', 'insights-avoidable', ALL, [
          ['fix', 'string'],
          ['breaks', 'number'],
          ['missedCacheReadTokens', 'number', 'missed tokens'],
          ['savingsUsd', 'number', 'would have saved'],
          ['unpriced', 'number', 'unpriced breaks'],
          ['involved', 'string'],
          ['advice', 'string'],
        ]).overrideByName('would have saved', [unit('currencyUSD'), unknownPrice]),
      )
      .withPanel(
        table('Volatile prompt parts', 'System blocks and tools whose changes broke the cache, by the re-write cost of those breaks.', 'insights-volatile', { limit: '20', ...ALL }, [
          ['kind', 'string'],
          ['name', 'string'],
          ['breaks', 'number'],
          ['sessions', 'number'],
          ['days', 'number'],
          ['costUsd', 'number', 're-write cost'],
          ['unpriced', 'number', 'unpriced breaks'],
        ], 12).overrideByName('re-write cost', [unit('currencyUSD'), unknownPrice]),
      )
      .withPanel(
        table('TTL advice', 'Per stream and model: turns by idle gap, and what the other cache tier would have saved. A session opens its drill-down.', 'insights-ttl', { limit: '20', ...STREAMS }, [
          ['sessionId', 'string', 'session'],
          ['agentId', 'string', 'agent'],
          ['model', 'string'],
          ['within5m', 'number', '≤ 5 min'],
          ['within1h', 'number', '5 min – 1 h'],
          ['over1h', 'number', '> 1 h'],
          ['currentTier', 'string', 'tier now'],
          ['advisedTier', 'string', 'advised'],
          ['adviceSavesUsd', 'number', 'advice saves'],
        ], 12)
          .overrideByName('session', [sessionLink])
          .overrideByName('advice saves', [unit('currencyUSD'), unknownPrice]),
      )
      .withRow(new RowBuilder('Where the cache is lost'))
      .withPanel(
        // Across agents by nature: an agent filter would cut a fan-out apart.
        table('Fan-out cold starts', 'Requests that started together with one prefix and each wrote it: the tokens written more than once.', 'insights-fanout', { limit: '20' }, [
          ['ts', 'timestamp_epoch', 'time'],
          ['model', 'string'],
          ['turns', 'number'],
          ['writtenAgainTokens', 'number', 'written again'],
          ['costUsd', 'number', 'cost'],
          ['requestIds', 'string', 'requests'],
        ], 12).overrideByName('cost', [unit('currencyUSD'), unknownPrice]),
      )
      .withPanel(
        table('Chronic misses', 'Streams that rarely read their cache, with the likely cause. A session opens its drill-down.', 'insights-chronic', { limit: '20', ...STREAMS }, [
          ['sessionId', 'string', 'session'],
          ['agentId', 'string', 'agent'],
          ['turns', 'number'],
          ['cacheRate', 'number', 'cache rate'],
          ['unreadTokens', 'number', 'not read'],
          ['cause', 'string'],
        ], 12)
          .overrideByName('session', [sessionLink])
          .overrideByName('cache rate', [unit('percentunit')]),
      )
      .withRow(new RowBuilder('Other verdicts'))
      .withPanel(
        table("Confusion: cachebreak against the harness and the provider", 'One row per pair of verdicts; the cells that disagree name their breaks (GET /v1/breaks/<request id>).', 'insights-agreement', ALL, [
          ['side', 'string'],
          ['cachebreak', 'string'],
          ['other', 'string'],
          ['breaks', 'number'],
          ['agrees', 'string'],
          ['disagreeing', 'string', 'disagreeing breaks'],
        ]),
      )
      .build(),
  );
}
