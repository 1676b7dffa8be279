// Breaks chosen by what the store has no column for: the fingerprint of their
// cause (core/fingerprint.ts), and whether the harness's and the provider's
// verdicts agree with cachebreak's (core/verdicts.ts). Read through the Store
// a thousand at a time in the order asked for, the first MAX_SCANNED at most,
// so both stores answer alike. The cursor says where the next page starts:
// the store's cursor of the thousand it is in, how many breaks kept there come
// before it, and how many breaks were read before that thousand; so each
// page reads on from there instead of again from the start.
import { breakFingerprint } from '../core/fingerprint.js';
import type { BreakRecord } from '../core/types.js';
import { verdictsOf, type Verdict } from '../core/verdicts.js';
import { cursorValues, encodeCursor } from './filters.js';
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
  const [from, skip, readBefore] = page.cursor === undefined ? ['', 0, 0] : (cursorValues(page.cursor, ['string', 'number', 'number']) as [string, number, number]);
  if (![skip, readBefore].every((n) => Number.isSafeInteger(n) && n >= 0) || readBefore >= max) throw new InvalidQueryError('cursor', 'not a cursor this server issued; pass nextCursor unchanged');
  const items: BreakRecord[] = [];
  let next: string | null = null;
  await readPages(
    (query) => store.breaks(project, range, filters, query, order),
    max - readBefore,
    async (records, start) => {
      const kept = await keptOf(store, project, records, computed);
      // The cursor's skip counts in the thousand it names: the first read here.
      for (let i = start.readBefore === 0 ? skip : 0; i < kept.length; i++) {
        if (items.length === page.limit) {
          next = encodeCursor([start.cursor ?? '', i, readBefore + start.readBefore]);
          return false;
        }
        items.push(kept[i]!);
      }
      return true;
    },
    from === '' ? undefined : from,
  );
  return { items, nextCursor: next };
}
