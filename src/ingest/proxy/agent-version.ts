// The agent's version from the User-Agent a harness sends, where the header
// names it exactly: `claude-cli/2.1.332 (external, cli)`, `GeminiCLI/0.61.0
// (linux; x64)`, `QwenCode/0.24.4 (…)`. Any other User-Agent (an SDK's, a
// wrapper's) names no agent version: none is guessed.
import type { IncomingHttpHeaders } from 'node:http';

const HARNESS_AGENT = /^(?:claude-cli|GeminiCLI|QwenCode)\/(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]{1,64})?)(?:[\s;(]|$)/;

/** The harness's version its User-Agent names, or undefined. */
export function agentVersionOf(headers: IncomingHttpHeaders): string | undefined {
  const agent = headers['user-agent'];
  return typeof agent === 'string' ? HARNESS_AGENT.exec(agent)?.[1] : undefined;
}
