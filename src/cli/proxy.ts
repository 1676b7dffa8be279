// `cachebreak proxy`: the server (as `cachebreak serve` runs it) plus a proxy
// for the provider APIs on its own port. A harness that takes a base URL
// sends its model calls through it, and every call is attributed with no
// other change to the harness.
import { SESSION_HEADERS, AGENT_HEADER } from '../ingest/proxy/identity.js';
import { DIAGNOSIS_BETA, KEY_HEADER } from '../ingest/proxy/proxy.js';
import { rejectStrayArguments, type Command } from './command.js';
import { runServer, SERVE_DETAILS, SERVE_OPTIONS, type ServeOptionName } from './serve.js';

const PROXY_OPTIONS = ['proxy-port', 'anthropic-upstream', 'openai-upstream', 'gemini-upstream', 'provider-diagnostics', ...SERVE_OPTIONS] as const;

export const proxyCommand: Command<ServeOptionName | 'proxy-port' | 'anthropic-upstream' | 'openai-upstream' | 'gemini-upstream' | 'provider-diagnostics'> = {
  name: 'proxy',
  summary: 'Run the server with a proxy for the Anthropic, OpenAI and Gemini APIs that attributes every call it forwards.',
  usage: 'proxy [options]',
  options: PROXY_OPTIONS,
  details: [
    'Point a harness at the proxy (port --proxy-port, on --host):',
    '  ANTHROPIC_BASE_URL=http://127.0.0.1:4319/anthropic        (Anthropic Messages)',
    '  OPENAI_BASE_URL=http://127.0.0.1:4319/openai/v1           (Chat Completions, Responses)',
    '  GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4319/gemini       (generateContent, streamGenerateContent)',
    'Each request goes unchanged (less the x-cachebreak-* headers) to the upstream of its prefix, never to a',
    'host the request names; the answer streams back byte for byte. Other paths are answered 404.',
    'Calls to messages, chat/completions, responses and generateContent are observed: the snapshot of the',
    'request and the usage of the response are stored as one turn, hashes and counts only; never a header,',
    'a credential or content. Storing is best effort: a slow, locked or failing database never fails or delays',
    'a call (keys are checked from a copy in memory, read every second; turns are stored from a bounded queue);',
    'what is not stored is counted in cachebreak_proxy_observations_total on /metrics and logged.',
    'A path with a .. segment (or %2e%2e) is answered 400.',
    `With --provider-diagnostics (opt-in) the one change made to a request: Anthropic's ${DIAGNOSIS_BETA} beta is`,
    'added to its anthropic-beta header (merged with the betas the client sent, never twice), so Anthropic keeps',
    'what it needs to say why a cache missed; the reasons it returns are read like the ones clients send.',
    `Session: the first of the headers ${SESSION_HEADERS.join(', ')}, else "proxy".`,
    `Agent: the ${AGENT_HEADER} header, else "system-" and the hash of the first system block (subagents and side`,
    'queries have system prompts of their own), else "main".',
    `A server with API keys needs one with scope ingest in the ${KEY_HEADER} header of each request.`,
    '',
    SERVE_DETAILS,
  ].join('\n'),
  run: ({ values, positionals }, io) => {
    rejectStrayArguments('proxy', PROXY_OPTIONS, positionals, io.env);
    return runServer(values, io, {
      port: values['proxy-port'],
      upstreams: { anthropic: values['anthropic-upstream'], openai: values['openai-upstream'], gemini: values['gemini-upstream'] },
      providerDiagnostics: values['provider-diagnostics'],
    });
  },
};
