// Breaks chosen by what the store has no column for: the fingerprint of their
// cause (core/fingerprint.ts), and whether the harness's and the provider's
// verdicts agree with cachebreak's (core/verdicts.ts). Read through the Store
// a thousand at a time in the order asked for, the first MAX_SCANNED at most,
// so both stores answer alike; the cursor is an offset among the breaks kept.
import { breakFingerprint } from '../core/fingerprint.js';
import type { BreakRecord } from '../core/types.js';
import { verdictsOf, type Verdict } from '../core/verdicts.js';
import { cursorValues, nextCursor } from './filters.js';
import { MAX_SCANNED } from './fingerprints.js';
import { harnessReportsOf } from './harness-breaks.js';
import { readPages } from './paging.js';
import { InvalidQueryError, type BreakFilters, type BreakOrder, type Page, type PageQuery, type Store, type TimeRange } from './store.js';

/** A side's verdict against cachebreak's: the same, another, or none given. */
export const AGREEMENTS = ['agrees', 'disagrees', 'silent'] as const;
export type Agreement = (typeof AGREEMENTS)[number];

export interface ComputedFilters {
  /** Breaks whose cause has one of these fingerprints. */
  fingerprint?: string[];
  /** Breaks where the harness's report (joined as in GET /v1/breaks) agrees, disagrees, or is missing. */
  harnessAgreement?: Agreement[];
  /** Breaks where the provider's diagnosis agrees, disagrees, or is missing. */
  providerAgreement?: Agreement[];
}

export const COMPUTED_FILTERS = ['fingerprint', 'harnessAgreement', 'providerAgreement'] as const satisfies readonly (keyof ComputedFilters)[];

/** 16 lowercase hex digits, as breakFingerprint writes them. */
const FINGERPRINT = /^[0-9a-f]{16}$/;

/** The computed filters of a query, each value checked; `values` gives a parameter's values, undefined when absent. */
export function computedFiltersOf(values: (name: string) => string[] | undefined): ComputedFilters {
  const filters: ComputedFilters = {};
  const fingerprint = values('fingerprint');
  if (fingerprint) {
    const wrong = fingerprint.find((f) => !FINGERPRINT.test(f));
    if (wrong !== undefined) throw new InvalidQueryError('fingerprint', `expected 16 lowercase hex digits as GET /v1/breaks/fingerprints gives, got "${wrong.slice(0, 40)}"`, 'take one from GET /v1/breaks/fingerprints or the Causes page');
    filters.fingerprint = fingerprint;
  }
  for (const name of ['harnessAgreement', 'providerAgreement'] as const) {
    const given = values(name);
    if (!given) continue;
    const wrong = given.find((v) => !(AGREEMENTS as readonly string[]).includes(v));
    if (wrong !== undefined) throw new InvalidQueryError(name, `expected one of ${AGREEMENTS.join(', ')}, got "${wrong.slice(0, 40)}"`, `leave ${name} out for every break`);
    filters[name] = given as Agreement[];
  }
  return filters;
}

export const anyComputed = (filters: ComputedFilters) => COMPUTED_FILTERS.some((name) => filters[name] !== undefined);

const agreementOf = (ours: Verdict, theirs: Verdict | null): Agreement => (theirs === null ? 'silent' : theirs === ours ? 'agrees' : 'disagrees');

/** Which of `records` the computed filters keep. */
async function keptOf(store: Store, project: string, records: BreakRecord[], filters: ComputedFilters): Promise<BreakRecord[]> {
  const { fingerprint, harnessAgreement, providerAgreement } = filters;
  const causes = fingerprint && new Set(fingerprint);
  const reports = harnessAgreement || providerAgreement ? await harnessReportsOf(store, project, records) : undefined;
  return records.filter((record) => {
    if (causes && !causes.has(breakFingerprint(record))) return false;
    if (!reports) return true;
    const v = verdictsOf(record, reports.get(record.requestId));
    return (!harnessAgreement || harnessAgreement.includes(agreementOf(v.ours, v.harness))) && (!providerAgreement || providerAgreement.includes(agreementOf(v.ours, v.provider)));
  });
}

/** A page of the breaks that the store's filters and the computed ones keep, in `order`. */
export async function breaksWhere(
  store: Store,
  project: string,
  range: TimeRange,
  filters: BreakFilters,
  computed: ComputedFilters,
  page: PageQuery,
  order: BreakOrder = 'recent',
  max = MAX_SCANNED,
): Promise<Page<BreakRecord>> {
  const offset = page.cursor === undefined ? 0 : (cursorValues(page.cursor, ['number'])[0] as number);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidQueryError('cursor', 'not a cursor this server issued; pass nextCursor unchanged');
  const kept: BreakRecord[] = [];
  await readPages((next) => store.breaks(project, range, filters, next, order), max, async (records) => {
    kept.push(...(await keptOf(store, project, records, computed)));
    return kept.length <= offset + page.limit;
  });
  const rows = kept.slice(offset);
  return { items: rows.slice(0, page.limit), nextCursor: nextCursor(rows, page.limit, () => [offset + page.limit]) };
}
