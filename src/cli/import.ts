// `cachebreak import FILE…`: NDJSON events (SPEC §2, one per line) into a
// database, or into a running server, with a summary that points at every
// rejected line.
import { statSync } from 'node:fs';
import { ConfigError, detectionOf } from '../config.js';
import type { Command, Io } from './command.js';
import { count, plural } from './format.js';
import { databaseSink, ImportStopped, serverSink, type LineRejection, type Sink } from './import-sinks.js';
import { displayName, eventLines, readSource, STDIN } from './ndjson-input.js';
import { progressBar } from './progress.js';

/** Rejections listed in the summary; the rest are counted. */
const LISTED = 20;

interface Tally {
  lines: number;
  accepted: number;
  duplicates: number;
  rejected: { source: string; rejection: LineRejection }[];
}

function checkSources(sources: readonly string[]): void {
  if (sources.length === 0) throw new ConfigError('name at least one NDJSON file (or - for standard input); see --help');
  for (const source of sources) {
    if (source === STDIN) continue;
    let isFile: boolean;
    try {
      isFile = statSync(source).isFile();
    } catch {
      throw new ConfigError(`no such file: ${source}`);
    }
    if (!isFile) throw new ConfigError(`not a file: ${source}`);
  }
}

async function importSource(source: string, sink: Sink, batchSize: number, tally: Tally, io: Io): Promise<void> {
  const lines = eventLines(await readSource(source, io));
  const progress = progressBar(io, displayName(source), lines.length, 'lines');
  try {
    for (let start = 0; start < lines.length; start += batchSize) {
      const batch = lines.slice(start, start + batchSize);
      const result = await sink.send(batch);
      tally.lines += batch.length;
      tally.accepted += result.accepted;
      tally.duplicates += result.duplicates;
      for (const rejection of result.rejected) tally.rejected.push({ source: displayName(source), rejection });
      progress.update(start + batch.length);
    }
  } finally {
    progress.finish();
  }
}

function summary(tally: Tally, files: number, target: string): string {
  const out = [
    `Imported ${plural(tally.lines, 'line')} from ${plural(files, 'file')} into ${target}: ` +
      `${count(tally.accepted)} accepted, ${plural(tally.duplicates, 'duplicate')}, ${count(tally.rejected.length)} rejected.`,
  ];
  if (tally.rejected.length > 0) {
    out.push('Rejected:');
    for (const { source, rejection } of tally.rejected.slice(0, LISTED)) {
      out.push(`  ${source}:${rejection.line}: ${rejection.error}`);
    }
    if (tally.rejected.length > LISTED) out.push(`  … and ${plural(tally.rejected.length - LISTED, 'more rejected line')}`);
  }
  return out.join('\n') + '\n';
}

export const importCommand: Command<'db' | 'server' | 'key' | 'project' | 'batch' | 'min-miss-tokens' | 'miss-ratio' | 'min-cacheable' | 'prices'> = {
  name: 'import',
  summary: 'Import NDJSON event files (one event per line, as POST /v1/events takes them) into the database or a server.',
  usage: 'import [options] FILE… (- reads standard input)',
  options: ['db', 'server', 'key', 'project', 'batch', 'min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices'],
  details: [
    'With --server, events go to that server\'s POST /v1/events and are stored under its project and',
    'detection settings; otherwise into --db under --project. A server with API keys needs one with scope',
    'ingest, in CACHEBREAK_KEY (or --key); it is never printed. Importing the same file again stores',
    'nothing new: its events count as duplicates.',
    'Exit code: 0 when every line was accepted or a duplicate, 1 when a line was rejected or the',
    'import stopped, 2 for a usage error.',
  ].join('\n'),
  async run({ values, positionals }, io) {
    checkSources(positionals);
    const stopped = (error: unknown): number => {
      if (!(error instanceof ImportStopped)) throw error;
      io.stderr(`cachebreak import: stopped: ${error.message}\n`);
      return 1;
    };
    let sink: Sink;
    try {
      sink = values.server ? serverSink(values.server, values.key) : databaseSink(values.db, values.project, detectionOf(values), io.stderr);
    } catch (error) {
      return stopped(error);
    }
    const tally: Tally = { lines: 0, accepted: 0, duplicates: 0, rejected: [] };
    let code: number;
    try {
      for (const source of positionals) await importSource(source, sink, values.batch, tally, io);
      code = tally.rejected.length > 0 ? 1 : 0;
    } catch (error) {
      code = stopped(error);
    } finally {
      await sink.close();
    }
    io.stdout(summary(tally, positionals.length, sink.target));
    return code;
  },
};
