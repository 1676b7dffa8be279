// --trace-link: a URL template to the user's tracer (Langfuse, Phoenix,
// Jaeger, Tempo…), filled per break with the trace and span telemetry gave
// its turn, so the break page can open the trace in the tool that holds it.
import type { BreakRecord } from '../core/types.js';

export const TRACE_LINK_PLACEHOLDERS = ['traceId', 'spanId', 'sessionId'] as const;
type Placeholder = (typeof TRACE_LINK_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** What is wrong with a template, or undefined: it must be an http(s) URL once filled, with at least one placeholder, known ones only. */
export function traceLinkProblem(template: string): string | undefined {
  const placeholders = [...template.matchAll(PLACEHOLDER)].map(([, placeholder]) => placeholder!);
  for (const placeholder of placeholders) {
    if (!(TRACE_LINK_PLACEHOLDERS as readonly string[]).includes(placeholder)) {
      return `unknown placeholder {${placeholder.slice(0, 40)}}; use {traceId}, {spanId} or {sessionId}`;
    }
  }
  if (placeholders.length === 0) {
    return `no placeholder: the link would be the same for every break; put {traceId}, {spanId} or {sessionId} where the tracer expects it, got "${template.slice(0, 100)}"`;
  }
  let url: URL;
  try {
    url = new URL(template.replace(PLACEHOLDER, 'x'));
  } catch {
    return `expected an http(s) URL with {traceId}, {spanId} or {sessionId}, such as https://cloud.langfuse.com/project/<id>/traces/{traceId}, got "${template.slice(0, 100)}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `expected an http:// or https:// URL, got "${template.slice(0, 100)}"`;
  return undefined;
}

/**
 * The break's link, or null: telemetry gave its turn no trace or span, or
 * the template names one it lacks. Values are URL-encoded.
 */
export function traceLinkOf(template: string, b: Pick<BreakRecord, 'traceId' | 'spanId' | 'sessionId'>): string | null {
  if (b.traceId === null && b.spanId === null) return null;
  const values: Record<Placeholder, string | null> = { traceId: b.traceId, spanId: b.spanId, sessionId: b.sessionId };
  let missing = false;
  const link = template.replace(PLACEHOLDER, (_, placeholder: Placeholder) => {
    const value = values[placeholder];
    if (value === null) missing = true;
    return encodeURIComponent(value ?? '');
  });
  return missing ? null : link;
}
