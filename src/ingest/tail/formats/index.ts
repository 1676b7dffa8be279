// The formats `tail` reads, each told apart from a file's first line (or
// forced with --format), with the framer that cuts it into units and the
// decoder that reads each unit.
import { lineFramer } from '../frames/lines.js';
import type { Framer } from '../frames/frame.js';
import { objectFramer } from '../frames/objects.js';
import { claudeDebugDecoder } from './claude-debug.js';
import type { Decoder, FileContext } from './decoder.js';
import { ndjsonDecoder } from './ndjson.js';
import { otelFileDecoder } from './otel-file.js';
import { QWEN_DEBUG_NOTE, qwenDebugDecoder } from './qwen-debug.js';
import { QWEN_OPENAI_HEAD, qwenOpenAiDecoder } from './qwen-openai.js';

import type { Format } from './names.js';

export { FORMATS, type Format } from './names.js';

/** How much of a file's start detection reads at most. */
export const DETECT_BYTES = 64 * 1024;

const DEBUG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z \[[A-Z]+\] /;
const EVENT_TYPES = new Set(['snapshot', 'usage', 'turn']);

function isEvent(value: unknown): boolean {
  return typeof value === 'object' && value !== null && EVENT_TYPES.has(String((value as { type?: unknown }).type));
}

function jsonFormat(firstLine: string): Format {
  // Pretty-printed objects open with a lone "{"; a compact one is an event or an SDK object.
  if (firstLine === '{') return 'otel-file';
  try {
    return isEvent(JSON.parse(firstLine)) ? 'ndjson' : 'otel-file';
  } catch {
    return /"requestId"\s*:/.test(firstLine) ? 'ndjson' : 'otel-file';
  }
}

function debugFormat(text: string, path: string): Format {
  if (/[/\\]\.qwen[/\\]/.test(path)) return 'qwen-debug';
  if (/[/\\]\.claude[/\\]/.test(path)) return 'claude-debug';
  // Only Qwen Code writes trace context into its lines.
  return /^\S+ \[[A-Z]+\](?: \[[^\]]*\])? \[trace_id=/m.test(text) ? 'qwen-debug' : 'claude-debug';
}

/**
 * The format of a file from its first bytes (at most DETECT_BYTES): undefined
 * while its first line is incomplete, 'unknown' when it is none of ours.
 */
export function detectFormat(head: Buffer, path: string): Format | 'unknown' | undefined {
  let text = head.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  text = text.trimStart();
  if (text === '') return undefined;
  const end = text.indexOf('\n');
  if (end < 0) {
    if (head.length < DETECT_BYTES) return undefined;
    return text.startsWith('{') ? 'otel-file' : 'unknown';
  }
  const first = text.slice(0, end).trimEnd();
  if (QWEN_OPENAI_HEAD.test(text)) return 'qwen-openai';
  if (first.startsWith('{')) return jsonFormat(first);
  if (DEBUG_LINE.test(first)) return debugFormat(text, path);
  return 'unknown';
}

export function framerOf(format: Format): Framer {
  return format === 'otel-file' || format === 'qwen-openai' ? objectFramer() : lineFramer();
}

export function decoderOf(format: Format, file: FileContext): Decoder {
  switch (format) {
    case 'ndjson':
      return ndjsonDecoder();
    case 'otel-file':
      return otelFileDecoder();
    case 'claude-debug':
      return claudeDebugDecoder(file);
    case 'qwen-debug':
      return qwenDebugDecoder();
    case 'qwen-openai':
      return qwenOpenAiDecoder(file);
  }
}

/** Said once per file of the format, when it carries less than one might expect. */
export const FORMAT_NOTES: Partial<Record<Format, string>> = { 'qwen-debug': QWEN_DEBUG_NOTE };
