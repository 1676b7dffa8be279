// GET /breaks/:requestId: one break as a diff of the two prefixes it
// compares — the baseline's and the turn's tools side by side (added,
// removed, moved and changed ones marked, as the break record names them;
// long runs of unchanged ones folded),
// system blocks, markers and parameters by hash, the idle gap against the
// cache's TTL, and the harness's and the provider's verdicts beside ours.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import type { BreakRecord, Prefix } from '../../core/types.js';
import { providerReason } from '../../core/diagnosis.js';
import { cachebreakVerdict, harnessAgrees, harnessVerdicts, providerVerdict } from '../../core/verdicts.js';
import { CachebreakError } from '../../errors.js';
import { harnessReportsOf } from '../../store/harness-breaks.js';
import type { ExternalBreak } from '../../store/store.js';
import { cost, count, duration, html, Html, utc } from './html.js';
import { traceLinkOf } from '../trace-link.js';
import { layout } from './layout.js';
import { linkTo, uiRangeOf } from './range.js';

const short = (hash: string) => hash.slice(0, 12);
const none = html`<p class="muted">not stored</p>`;

/** A class and a word for one tool on one side, from the break record's toolChanges. */
function toolMark(b: BreakRecord, name: string, side: 'baseline' | 'turn'): [string, string] | undefined {
  const { added, removed, moved, schemaChanged } = b.toolChanges;
  if (side === 'turn' && added.includes(name)) return ['added', 'added'];
  if (side === 'baseline' && removed.includes(name)) return ['removed', 'removed'];
  if (schemaChanged.includes(name)) return ['changed', 'schema changed'];
  if (moved.includes(name)) return ['moved', 'moved'];
  return undefined;
}

/** Unchanged entries in a row, at least this many, fold into one line that opens to show them. */
const FOLD_AT = 4;

/**
 * A numbered list whose runs of FOLD_AT or more unchanged entries are folded
 * ("9 unchanged"); each entry keeps its number (`first` is the first's).
 */
function foldedList(className: string, first: number, entries: { changed: boolean; item: (n: number) => Html }[]): Html {
  const parts: Html[] = [];
  for (let i = 0; i < entries.length; ) {
    let end = i;
    while (end < entries.length && !entries[end]!.changed) end++;
    if (end - i >= FOLD_AT) {
      const run = entries.slice(i, end).map((e, k) => e.item(first + i + k));
      parts.push(html`<li class="fold"><details><summary>${count(end - i)} unchanged</summary><ol class="prefix">${run}</ol></details></li>`);
      i = end;
    } else {
      parts.push(entries[i]!.item(first + i));
      i++;
    }
  }
  return html`<ol class="prefix ${className}">${parts}</ol>`;
}

function toolList(b: BreakRecord, prefix: Prefix | null, side: 'baseline' | 'turn'): Html {
  if (!prefix?.tools) return none;
  return foldedList(
    'tools',
    1,
    prefix.tools.map((t) => {
      const mark = toolMark(b, t.name, side);
      return {
        changed: mark !== undefined,
        item: (n) =>
          mark
            ? html`<li value="${n}" class="${mark[0]}" data-tool="${t.name}"><code>${t.name}</code><span class="tag">${mark[1]}</span></li>`
            : html`<li value="${n}" data-tool="${t.name}"><code>${t.name}</code></li>`,
      };
    }),
  );
}

function blockList(b: BreakRecord, prefix: Prefix | null, other: Prefix | null): Html {
  if (!prefix?.systemBlockHashes) return none;
  return foldedList(
    'blocks',
    0,
    prefix.systemBlockHashes.map((hash, i) => {
      const changed = b.changedSystemBlocks?.includes(i) || other?.systemBlockHashes?.[i] !== hash;
      return {
        changed,
        item: (n) => (changed ? html`<li value="${n}" class="changed"><code>${short(hash)}</code><span class="tag">changed</span></li>` : html`<li value="${n}"><code>${short(hash)}</code></li>`),
      };
    }),
  );
}

function markerList(prefix: Prefix | null, other: Prefix | null, side: 'baseline' | 'turn'): Html {
  if (!prefix?.markers || prefix.markers.length === 0) return none;
  const mark = side === 'turn' ? 'added' : 'removed';
  return html`<ul class="prefix markers">${prefix.markers.map((m) =>
    other?.markers?.includes(m) ? html`<li><code>${m}</code></li>` : html`<li class="${mark}"><code>${m}</code><span class="tag">${mark}</span></li>`,
  )}</ul>`;
}

function side(title: string, body: Html): Html {
  return html`<div class="side"><h3>${title}</h3>${body}</div>`;
}

function params(b: BreakRecord, baseline: Prefix | null, turn: Prefix | null): Html {
  const names = [...new Set([...Object.keys(baseline?.params ?? {}), ...Object.keys(turn?.params ?? {}), ...b.changedParams])].sort();
  if (names.length === 0) return html`<p class="muted">No request parameters recorded.</p>`;
  const cell = (p: Prefix | null, name: string) => (p?.params?.[name] === undefined ? html`<span class="muted">–</span>` : html`<code>${short(p.params[name])}</code>`);
  return html`<div class="scroll"><table id="params"><thead><tr><th>parameter</th><th>baseline</th><th>this turn</th></tr></thead><tbody>${names.map(
    (name) => html`<tr${b.changedParams.includes(name) ? html` class="changed"` : ''}><td><code>${name}</code>${b.changedParams.includes(name) ? html`<span class="tag">changed</span>` : ''}</td><td>${cell(baseline, name)}</td><td>${cell(turn, name)}</td></tr>`,
  )}</tbody></table></div>`;
}

function gap(b: BreakRecord): Html {
  const limit = b.ttlMaxMs ?? b.ttlMs;
  const scale = Math.max(b.gapMs, limit ?? 0) || 1;
  const ttl = b.ttlMs === null ? 'unknown' : duration(b.ttlMs) + (b.ttlMaxMs !== null && b.ttlMaxMs !== b.ttlMs ? ` (up to ${duration(b.ttlMaxMs)})` : '');
  const verdict = b.ttlMs === null ? '' : b.gapMs > b.ttlMs ? (b.ttlMaxMs !== null && b.gapMs <= b.ttlMaxMs ? 'longer than the shorter TTL, within the longer' : 'longer than the TTL') : 'within the TTL';
  return html`<p id="gap">Idle <strong>${duration(b.gapMs)}</strong> since the baseline; TTL <strong>${ttl}</strong> <span class="muted">(${b.ttlSource})</span>${verdict ? html`: ${verdict}` : ''}${b.partialExpiry ? ' (the shorter tier expired)' : ''}.</p>
<div class="gap" aria-hidden="true"><div class="bar" style="width:${((100 * b.gapMs) / scale).toFixed(1)}%"></div>${b.ttlMs === null ? '' : html`<div class="ttl" style="left:${((100 * b.ttlMs) / scale).toFixed(1)}%"></div>`}</div>`;
}

function verdicts(b: BreakRecord, report: ExternalBreak | undefined): Html {
  const provider = providerVerdict(b.providerDiagnosis);
  const named = providerReason(b.providerDiagnosis);
  const missed = named === null || named.missedTokens === null ? '' : html`<br><span class="muted">${named.provider}: ${count(named.missedTokens)} input tokens missed</span>`;
  return html`<div class="scroll"><table id="verdicts"><thead><tr><th>who</th><th>says</th><th>verdict</th></tr></thead><tbody>
<tr><td>cachebreak</td><td class="reason">${b.reasons.join(', ')}${b.cause ? html`<br><span class="muted">${b.cause}</span>` : ''}</td><td>${cachebreakVerdict(b.reason)}</td></tr>
<tr><td>harness${report ? html` <span class="muted">(${report.harness})</span>` : ''}</td><td>${report ? report.reason : html`<span class="muted">no report</span>`}</td><td>${report ? `${harnessVerdicts(report.reason).join(', ') || 'unknown'} — ${harnessAgrees(b.reason, report.reason) ? 'agrees' : 'differs'}` : ''}</td></tr>
<tr><td>provider</td><td>${b.providerDiagnosis === null || b.providerDiagnosis === undefined ? html`<span class="muted">no diagnosis</span>` : html`<code>${JSON.stringify(b.providerDiagnosis)}</code>${missed}`}</td><td>${provider === null ? '' : `${provider} — ${provider === cachebreakVerdict(b.reason) ? 'agrees' : 'differs'}`}</td></tr>
</tbody></table></div>`;
}

/** "Open trace" to the break's trace in the user's tracer (--trace-link), when telemetry gave its turn one. */
function traceLink(b: BreakRecord, template: string | undefined): Html | '' {
  const link = template === undefined ? null : traceLinkOf(template, b);
  return link === null ? '' : html`<p><a id="trace-link" href="${link}" target="_blank" rel="noopener">Open trace</a> <span class="muted">trace <code>${b.traceId ?? '–'}</code> · span <code>${b.spanId ?? '–'}</code></span></p>`;
}

export function registerBreakPage(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/breaks/:requestId', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const requestId = c.req.param('requestId');
    const found = await deps.store.breakPrefixes(c.var.project, requestId);
    if (!found) throw new CachebreakError('not_found', `no break of request "${requestId.slice(0, 256)}"`, 'see the latest breaks at /');
    const { break: b, baseline, turn } = found;
    const report = (await harnessReportsOf(deps.store, c.var.project, [b])).get(b.requestId);
    const body = html`<h2>Break <code>${b.requestId}</code> <span class="reason">${b.reason}</span></h2>
${traceLink(b, deps.traceLink)}<p>${utc(b.ts)} · session <a href="${linkTo(`/sessions/${encodeURIComponent(b.sessionId)}`, range)}"><code>${b.sessionId}</code></a> · agent <code>${b.agentId}</code> · ${b.model ?? 'unknown model'}${b.agentVersion === null ? '' : html` · version <code>${b.agentVersion}</code>`} · baseline <code>${b.previousRequestId}</code></p>
<p>${count(b.missedCacheReadTokens)} cache-read tokens missed (expected ${count(b.expectedCacheReadTokens)}, read ${count(b.currentCacheReadTokens)}, wrote ${count(b.cacheWriteTokens)}) · extra cost ${cost(b.estimatedExtraCostUsd)}</p>
<h2>Verdicts</h2>${verdicts(b, report)}
<h2>Idle gap</h2>${gap(b)}
<h2>Tools</h2><p class="legend"><span class="added">added</span><span class="removed">removed</span><span class="moved">moved</span><span class="changed">schema changed</span></p>
<div class="columns" id="tools">${side('baseline', toolList(b, baseline, 'baseline'))}${side('this turn', toolList(b, turn, 'turn'))}</div>
<h2>System blocks</h2><div class="columns" id="system">${side('baseline', blockList(b, baseline, turn))}${side('this turn', blockList(b, turn, baseline))}</div>
<h2>Cache markers</h2><div class="columns" id="markers">${side('baseline', markerList(baseline, turn, 'baseline'))}${side('this turn', markerList(turn, baseline, 'turn'))}</div>
<h2>Request parameters</h2>${params(b, baseline, turn)}
${b.changesAfterCachedPrefix.length > 0 ? html`<p id="after-prefix">Also changed after the cached prefix (not the cause): ${b.changesAfterCachedPrefix.join(', ')}</p>` : ''}
${b.firstChangedMessageIndex === null ? '' : html`<p>First changed message: #${b.firstChangedMessageIndex}</p>`}`;
    const view = layout({ title: `Break ${requestId}`, path: `/breaks/${encodeURIComponent(requestId)}`, section: 'breaks', range, project: c.var.project, body });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
