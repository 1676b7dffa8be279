// `cachebreak tail PATH|GLOB…`: follows telemetry outfiles, debug logs and
// NDJSON event files as they grow, into a database (with --print, every break
// on stdout) or a running server, until SIGINT or SIGTERM.
import { basename } from 'node:path';
import { ConfigError, detectionOf } from '../config.js';
import { checkPatterns } from '../ingest/tail/check.js';
import { compilePattern } from '../ingest/tail/glob.js';
import { pipelineSink, Tailer, TailStopped, type TailReport, type TailSink, type TailTotals } from '../ingest/tail/index.js';
import { breakFields, externalBreakFields } from '../telemetry/break-line.js';
import { createLogger, printable } from '../telemetry/logfmt.js';
import type { Command, Io } from './command.js';
import { count, plural } from './format.js';
import { openLocal } from './local.js';
import { shownDb } from '../store/open.js';
import { progressBar, type Progress } from './progress.js';
import { checkServerKey, serverTailSink } from './tail-server.js';

/** Rejected lines shown per file; the rest are counted in the summary. */
const SHOWN = 20;
/** A backlog this large gets a progress bar (on a terminal). */
const PROGRESS_BYTES = 16 * 1024 ** 2;

/** Notices and rejected lines on stderr (stdout is for --print); a bar for large backlogs on a terminal. */
function stderrReport(io: Io): TailReport & { finish(): void } {
  const shown = new Map<string, number>();
  let bar: { path: string; progress: Progress } | undefined;
  const finishBar = () => {
    bar?.progress.finish();
    bar = undefined;
  };
  return {
    notice: (message) => {
      finishBar();
      // File names come from whoever can write the directories followed.
      io.stderr(`cachebreak tail: ${printable(message)}\n`);
    },
    rejected: (path, line, error) => {
      const n = (shown.get(path) ?? 0) + 1;
      shown.set(path, n);
      if (n > SHOWN) return;
      finishBar();
      const at = printable(path);
      io.stderr(n === SHOWN ? `${at}:${line}: ${error}\n${at}: further rejected lines are counted, not shown\n` : `${at}:${line}: ${error}\n`);
    },
    progress: (path, done, total) => {
      if (!io.interactive || total < PROGRESS_BYTES) return;
      if (bar?.path !== path) {
        finishBar();
        bar = { path, progress: progressBar(io, basename(path), Math.ceil(total / 1e6), 'MB') };
      }
      bar.progress.update(Math.floor(done / 1e6));
      if (done >= total) finishBar();
    },
    finish: finishBar,
  };
}

function summary(t: TailTotals, target: string): string {
  return (
    `Followed ${plural(t.files, 'file')} into ${target}: ${plural(t.units, 'line or object', 'lines or objects')} read ` +
    `(${count(t.bytes)} bytes), ${count(t.accepted)} events stored, ${plural(t.duplicates, 'duplicate')}, ` +
    `${plural(t.externalBreaks, 'harness-reported break')}, ${count(t.rejected)} rejected, ${count(t.ignored)} ignored.\n`
  );
}

/** Resolves on SIGINT, SIGTERM or the Io's signal, or (with its signal handlers removed) when `otherwise` does. */
function stopRequested(io: Io, otherwise: Promise<unknown>): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(why);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    if (io.signal?.aborted) stop('abort');
    io.signal?.addEventListener('abort', () => stop('abort'), { once: true });
    void otherwise.then(() => stop('refused'));
  });
}

type TailOptionName = 'db' | 'server' | 'key' | 'project' | 'format' | 'from-start' | 'follow-symlinks' | 'print' | 'batch' | 'min-miss-tokens' | 'miss-ratio' | 'min-cacheable' | 'prices';

export const tailCommand: Command<TailOptionName> = {
  name: 'tail',
  summary: 'Follow telemetry outfiles, debug logs and NDJSON event files as they grow, into the database or a server.',
  usage: 'tail [options] PATH|GLOB… (quote globs to follow files that appear later)',
  options: ['db', 'server', 'key', 'project', 'format', 'from-start', 'follow-symlinks', 'print', 'batch', 'min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices'],
  details: [
    'Formats, told apart per file from its first line (or forced with --format):',
    '  ndjson        cachebreak events, one per line (as POST /v1/events takes them)',
    '  otel-file     the telemetry outfile of Qwen Code (QWEN_TELEMETRY_OUTFILE) or Gemini CLI (GEMINI_TELEMETRY_OUTFILE)',
    '  claude-debug  Claude Code debug logs (~/.claude/debug/<session>.txt): [PROMPT CACHE BREAK] lines, kept as',
    '                harness-reported breaks (GET /v1/breaks/external)',
    '  qwen-debug    Qwen Code debug logs: counted only (they carry no usage cachebreak can rely on)',
    'Files are followed by identity: renamed (rotated) files are read to their end, truncated ones from 0, a',
    '"latest" link that switches moves to its new file, and files that appear later under a glob are read',
    'from their start. Only regular files are read: FIFOs, devices and sockets are skipped with a notice, and so',
    'are links that lead outside the directories of the paths and globs given, unless --follow-symlinks.',
    'Rejected lines say what is wrong and where, never what the line said.',
    'Files seen for the first time start at their end unless --from-start; files with a',
    'checkpoint (kept in --db, in the transaction of what was read) resume exactly where they were.',
    'With --server, events and harness-reported breaks go to that server and --db keeps only the',
    'checkpoints; a restart may resend the last batch, which the server stores once. Token counters from',
    'metric batches are stored only with --db. --print needs --db. A server with API keys needs one with',
    'scope ingest, in CACHEBREAK_KEY (or --key); it is never printed. A key the server refuses (401, 403)',
    'stops the tail at once; a server that cannot be reached or is busy is retried.',
    'Runs until SIGINT or SIGTERM, then prints a summary on stderr. Exit code: 0; 1 when the database cannot',
    'be opened or the server refuses the key; 2 for a usage error.',
  ].join('\n'),
  async run({ values, positionals }, io) {
    if (values.print && values.server) {
      throw new ConfigError('--print needs --db: breaks are detected where the events are stored; with --server, read them from GET /v1/breaks or the server log');
    }
    checkPatterns(positionals, (message) => io.stderr(`cachebreak tail: ${message}\n`));
    if (values.server) {
      try {
        await checkServerKey(values.server, values.key);
      } catch (error) {
        if (!(error instanceof TailStopped)) throw error;
        io.stderr(`cachebreak tail: stopped: ${error.message}\n`);
        return 1;
      }
    }
    const project = values.project;
    let local: Awaited<ReturnType<typeof openLocal>>;
    try {
      local = await openLocal(values.db, project, 'tail', detectionOf(values));
    } catch (error) {
      io.stderr(`cachebreak tail: cannot open the database ${shownDb(values.db)}: ${(error as Error).message}\n`);
      return 1;
    }
    await local.bringUpToDate(io.stderr);
    const report = stderrReport(io);
    const sink: TailSink = values.server ? serverTailSink(values.server, values.key, local, project, report.notice) : pipelineSink(local.pipeline, local.store, project);
    if (values.print) {
      const out = createLogger(io.stdout);
      local.onBreak(({ record }) => out.warn('prompt_cache_break', { project, ...breakFields(record) }));
      local.pipeline.subscribeExternal(({ record }) => out.warn('harness_prompt_cache_break', { project, ...externalBreakFields(record) }));
    }
    // What it follows, one line per path or glob, before the first line is read.
    const target = values.server || `${shownDb(values.db)} (project ${project})`;
    for (const text of positionals) {
      const pattern = compilePattern(text);
      io.stderr(`cachebreak tail: watching ${printable(pattern.absolute)} (${pattern.glob ? 'a glob, files matching now and later; ' : ''}files not seen before from their ${values['from-start'] ? 'start' : 'end'}; format ${values.format}) → ${target}\n`);
    }
    const tailer = new Tailer(
      {
        patterns: positionals,
        format: values.format === 'auto' ? undefined : values.format,
        fromStart: values['from-start'],
        batch: values.batch,
        followSymlinks: values['follow-symlinks'],
      },
      sink,
      report,
    );
    const stop = stopRequested(io, tailer.failed);
    try {
      await tailer.start();
      await stop;
    } finally {
      await tailer.stop();
      report.finish();
      await local.close();
    }
    io.stderr(summary(tailer.totals(), values.server || `${shownDb(values.db)} (project ${project})`));
    if (tailer.failure) {
      io.stderr(`cachebreak tail: stopped: ${tailer.failure.message}\n`);
      return 1;
    }
    return 0;
  },
};
