// A target for the Infinity datasource, which the foundation SDK does not
// cover: a GET of one /grafana/<query> endpoint, parsed by Infinity's
// backend parser (so alerting and query caching work), with every column
// declared by selector and type.
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { INFINITY } from './datasources.js';

export type InfinityColumnType = 'string' | 'number' | 'timestamp_epoch';

export interface InfinityColumn {
  selector: string;
  text: string;
  type: InfinityColumnType;
}

export interface InfinityTarget {
  refId: string;
  datasource: { type: string; uid: string };
  type: 'json';
  source: 'url';
  parser: 'backend';
  format: 'table' | 'timeseries' | 'dataframe';
  url: string;
  url_options: { method: 'GET'; data: string };
  root_selector: string;
  columns: InfinityColumn[];
}

/** `${model:percentencode}`: a multi-value variable as `{a,b}`, URL-encoded; All as `*` (the variables' allValue). */
export const variable = (name: string) => `\${${name}:percentencode}`;

/** The endpoint's URL on the datasource's base URL, over the dashboard's time range. */
export function endpoint(query: string, params: Record<string, string> = {}, ranged = true): string {
  const all = ranged ? { from: '${__timeFrom}', to: '${__timeTo}', ...params } : params;
  const search = Object.entries(all)
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  return `/grafana/${query}${search ? `?${search}` : ''}`;
}

export class InfinityQueryBuilder implements cog.Builder<cog.Dataquery> {
  private readonly target: InfinityTarget;

  constructor(url: string) {
    this.target = {
      refId: 'A',
      datasource: INFINITY,
      type: 'json',
      source: 'url',
      parser: 'backend',
      format: 'table',
      url,
      url_options: { method: 'GET', data: '' },
      root_selector: '',
      columns: [],
    };
  }

  refId(refId: string): this {
    this.target.refId = refId;
    return this;
  }

  /** timeseries: Infinity turns long rows (ts, labels, values) into one series per label set. */
  format(format: InfinityTarget['format']): this {
    this.target.format = format;
    return this;
  }

  column(selector: string, type: InfinityColumnType, text = selector): this {
    this.target.columns.push({ selector, text, type });
    return this;
  }

  /** The `ts` column every endpoint returns, as epoch ms. */
  time(text = 'time'): this {
    return this.column('ts', 'timestamp_epoch', text);
  }

  build(): cog.Dataquery {
    const target = { ...this.target, columns: [...this.target.columns] };
    // The SDK's marker of a query type; a function, so it never reaches the JSON.
    return Object.assign(target, { _implementsDataqueryVariant() {} });
  }
}
