// Which stream a proxied request belongs to, on request snapshots alone
// (src/ingest/proxy/identity.ts): a side call that forks the conversation
// under a system prompt and tools of its own keeps its own stream, and a
// conversation resumed with its system prompt edited and its first message
// rebuilt stays in its stream.
import { describe, expect, it } from 'vitest';
import type { SnapshotContent } from '../../src/core/types.js';
import { StreamLineage } from '../../src/ingest/proxy/identity.js';

const HEADERS = { 'x-cachebreak-session': 's1' };
const tools = (...names: string[]) => names.map((name) => ({ name, schemaHash: `schema-${name}` }));
const MAIN_TOOLS = tools('agent', 'glob', 'grep_search', 'read_file');
const MEMORY_TOOLS = tools('edit', 'glob', 'grep_search', 'read_file', 'run_shell_command', 'write_file');

const snapshot = (system: string, toolRefs: SnapshotContent['tools'], messages: string[], model = 'qwen3-coder-plus'): SnapshotContent => ({
  model,
  systemBlockHashes: [system],
  tools: toolRefs,
  messageHashes: messages,
});

describe('StreamLineage', () => {
  it('gives a memory-extraction side call over the conversation a stream of its own, and the conversation goes on in its stream', () => {
    const lineage = new StreamLineage();
    const agent = (s: SnapshotContent) => lineage.identityOf('p', HEADERS, s, 256).agentId;
    const main = agent(snapshot('sys-main', MAIN_TOOLS, ['u1']));
    const memory = agent(snapshot('sys-memory', MEMORY_TOOLS, ['u1', 'a1', 'extract']));
    expect(memory).not.toBe(main);
    expect(agent(snapshot('sys-main', MAIN_TOOLS, ['u1', 'a1', 'u2']))).toBe(main);
    expect(agent(snapshot('sys-memory', MEMORY_TOOLS, ['u1', 'a1', 'u2', 'a2', 'extract']))).toBe(memory);
  });

  it('keeps a conversation whose system prompt was edited in its stream, with the same tools or tools only added or removed', () => {
    const lineage = new StreamLineage();
    const agent = (s: SnapshotContent) => lineage.identityOf('p', HEADERS, s, 256).agentId;
    const main = agent(snapshot('sys-v1', MAIN_TOOLS, ['u1']));
    expect(agent(snapshot('sys-v2', MAIN_TOOLS, ['u1', 'a1', 'u2']))).toBe(main);
    expect(agent(snapshot('sys-v3', tools('agent', 'grep_search', 'read_file'), ['u1', 'a1', 'u2', 'a2', 'u3']))).toBe(main);
  });

  it('keeps a resumed conversation whose system prompt was edited and first message rebuilt in its stream, by its tools, not a subagent\'s', () => {
    const lineage = new StreamLineage();
    const agent = (s: SnapshotContent) => lineage.identityOf('p', HEADERS, s, 256).agentId;
    const main = agent(snapshot('sys-v1', MAIN_TOOLS, ['u1-with-date']));
    // A subagent the conversation called: its own system prompt and a single task message, the same tools.
    expect(agent(snapshot('sys-subagent', MAIN_TOOLS, ['task']))).not.toBe(main);
    // The conversation takes the subagent's result, then the memory extraction runs over it.
    expect(agent(snapshot('sys-v1', MAIN_TOOLS, ['u1-with-date', 'a1-agent-call', 'r1']))).toBe(main);
    const memory = agent(snapshot('sys-memory', MEMORY_TOOLS, ['u1-with-date', 'a1-agent-call', 'r1', 'a1', 'extract']));
    // Resumed with QWEN.md edited: the system prompt and the first message are new, the tools the same.
    expect(agent(snapshot('sys-v2', MAIN_TOOLS, ['u1-rebuilt', 'a1-agent-call', 'r1', 'a1', 'u2']))).toBe(main);
    expect(agent(snapshot('sys-memory-v2', MEMORY_TOOLS, ['u1-rebuilt', 'a1-agent-call', 'r1', 'a1', 'u2', 'a2', 'extract']))).toBe(memory);
    // Resumed again with a tool excluded: the system prompt (it names the tools), the tools and the first message all new.
    expect(agent(snapshot('sys-v3-no-glob', tools('agent', 'grep_search', 'read_file'), ['u1-rebuilt-again', 'a1-agent-call', 'r1', 'a1', 'u2', 'a2', 'u3']))).toBe(main);
    // A call that carries another history under the same tools is not the conversation resumed.
    expect(agent(snapshot('sys-fork', MAIN_TOOLS, ['u1-fork', 'other-1', 'other-2', 'other-3', 'other-4', 'other-5', 'other-6', 'other-7']))).not.toBe(main);
    // Another model family is another stream (a router lane), whatever its tools.
    expect(agent(snapshot('sys-v3', MAIN_TOOLS, ['u1-again', 'a1', 'u2', 'a2', 'u3'], 'gemini-2.5-flash-lite'))).not.toBe(main);
  });
});
