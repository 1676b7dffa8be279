// `cachebreak import FILE…`: NDJSON events (SPEC §2, one per line) into a
// database, or into a running server, streamed batch by batch (constant
// memory), with a summary that points at the rejected lines.
import { statSync } from 'node:fs';
import { ConfigError, detectionOf } from '../config.js';
import type { Command, Io } from './command.js';
import { count, plural } from './format.js';
import { databaseSink, ImportStopped, serverSink, type LineRejection, type Sink } from './import-sinks.js';
import { displayName, eventLines, STDIN } from './ndjson-input.js';
import { progressBar } from './progress.js';

/** Rejections listed in the summary; the rest are counted. */
const LISTED = 20;

interface Tally {
  lines: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  /** The first LISTED rejections, shown in the summary; the rest are counted. */
  listed: { source: string; rejection: LineRejection }[];
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
  // Standard input has no known size: no bar.
  const size = source === STDIN ? 0 : statSync(source).size;
  const progress = size > 0 ? progressBar(io, displayName(source), size, 'bytes') : undefined;
  try {
    for await (const { lines, bytesRead } of eventLines(source, io, batchSize)) {
      const result = await sink.send(lines);
      tally.lines += lines.length;
      tally.accepted += result.accepted;
      tally.duplicates += result.duplicates;
      tally.rejected += result.rejected.length;
      for (const rejection of result.rejected.slice(0, LISTED - tally.listed.length)) tally.listed.push({ source: displayName(source), rejection });
      progress?.update(bytesRead);
    }
  } finally {
    progress?.finish();
  }
}

function summary(tally: Tally, files: number, target: string): string {
  const out = [
    `Imported ${plural(tally.lines, 'line')} from ${plural(files, 'file')} into ${target}: ` +
      `${count(tally.accepted)} accepted, ${plural(tally.duplicates, 'duplicate')}, ${count(tally.rejected)} rejected.`,
  ];
  if (tally.rejected > 0) {
    out.push('Rejected:');
    for (const { source, rejection } of tally.listed) {
      out.push(`  ${source}:${rejection.line}: ${rejection.error}`);
    }
    if (tally.rejected > LISTED) out.push(`  … and ${plural(tally.rejected - LISTED, 'more rejected line')}`);
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
      sink = values.server ? serverSink(values.server, values.key) : await databaseSink(values.db, values.project, detectionOf(values), io.stderr);
    } catch (error) {
      return stopped(error);
    }
    const tally: Tally = { lines: 0, accepted: 0, duplicates: 0, rejected: 0, listed: [] };
    let code: number;
    try {
      for (const source of positionals) await importSource(source, sink, values.batch, tally, io);
      code = tally.rejected > 0 ? 1 : 0;
    } catch (error) {
      code = stopped(error);
    } finally {
      await sink.close();
    }
    io.stdout(summary(tally, positionals.length, sink.target));
    return code;
  },
};
