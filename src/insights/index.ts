// Every insight over one range (docs/insights.md): what `report` and the web
// UI show together. Each is also served alone under GET /v1/insights/*.
import type { Avoidable } from '../core/insights/avoidable.js';
import type { FanOuts } from '../core/insights/fanout.js';
import type { TtlAdvice } from '../core/insights/ttl.js';
import type { VolatilePart } from '../core/insights/volatile.js';
import type { PriceLookup } from '../core/prices.js';
import type { ConfusionTables } from '../core/verdicts.js';
import { confusionOf } from '../store/harness-breaks.js';
import type { Store, TimeRange } from '../store/store.js';
import { readAvoidable } from './avoidable.js';
import { readChronicMisses, type ChronicStream } from './chronic.js';
import { readFanOuts } from './fanout.js';
import { readTtlAdvice } from './ttl.js';
import { readVolatileParts } from './volatile.js';

export interface Insights {
  avoidable: Avoidable;
  volatile: VolatilePart[];
  fanOut: FanOuts;
  ttl: TtlAdvice;
  chronic: ChronicStream[];
  agreement: ConfusionTables;
}

/** Rows per list. */
export const INSIGHT_ROWS = 10;

export async function readInsights(store: Store, prices: PriceLookup, project: string, range: TimeRange): Promise<Insights> {
  const [avoidable, volatile, fanOut, ttl, chronic, agreement] = await Promise.all([
    readAvoidable(store, project, range, {}),
    readVolatileParts(store, project, range, {}, INSIGHT_ROWS),
    readFanOuts(store, prices, project, range, {}, INSIGHT_ROWS),
    readTtlAdvice(store, prices, project, range, {}, INSIGHT_ROWS),
    readChronicMisses(store, project, range, {}, INSIGHT_ROWS),
    confusionOf(store, project, range, {}),
  ]);
  return { avoidable, volatile, fanOut, ttl, chronic: chronic.streams, agreement };
}
