// Tool definitions → ToolRef[] in the order sent. One reader serves every API:
// their tool shapes and marker shapes do not overlap.
import { hashContent } from '../hash.js';
import type { ToolRef } from '../types.js';
import { expectArray, expectRecord, expectString, type JsonObject } from './common.js';
import { markerNames, readBlock, type Marker } from './markers.js';

/** Objects that wrap the named definition: OpenAI chat, OpenAI chat custom, Bedrock. */
const WRAPPERS = ['function', 'custom', 'toolSpec'] as const;

const DECLARATIONS = new Set(['functionDeclarations', 'function_declarations']);

function toolName(tool: JsonObject, field: string): string {
  for (const key of WRAPPERS) {
    if (tool[key] !== undefined) {
      return expectString(expectRecord(tool[key], `${field}.${key}`).name, `${field}.${key}.name`);
    }
  }
  if (tool.name !== undefined || typeof tool.type !== 'string') return expectString(tool.name, `${field}.name`);
  // A built-in tool ({type: "web_search"}) is named by its type; an MCP server
  // also by its label, since several can be listed.
  const label = tool.server_label ?? tool.mcp_server_name;
  return typeof label === 'string' ? `${tool.type}:${label}` : tool.type;
}

/** Gemini tools have no name or type: each key is a tool kind, e.g. {googleSearch: {}}. */
function isGeminiTool(tool: JsonObject): boolean {
  if ('name' in tool || 'type' in tool || WRAPPERS.some((key) => key in tool)) return false;
  return Object.values(tool).every((value) => typeof value === 'object' && value !== null);
}

function geminiTools(tool: JsonObject, field: string): ToolRef[] {
  const refs: ToolRef[] = [];
  for (const [kind, value] of Object.entries(tool)) {
    if (!DECLARATIONS.has(kind)) {
      refs.push({ name: kind, schemaHash: hashContent({ [kind]: value }) });
      continue;
    }
    expectArray(value, `${field}.${kind}`).forEach((raw, i) => {
      const declaration = expectRecord(raw, `${field}.${kind}[${i}]`);
      refs.push({ name: expectString(declaration.name, `${field}.${kind}[${i}].name`), schemaHash: hashContent(declaration) });
    });
  }
  return refs;
}

export function readTools(raw: readonly unknown[], field: string): { tools: ToolRef[]; markers: Marker[] } {
  const tools: ToolRef[] = [];
  const markers: Marker[] = [];
  raw.forEach((item, i) => {
    const at = `${field}[${i}]`;
    const read = readBlock(expectRecord(item, at), at);
    if ('content' in read) {
      const tool = read.content as JsonObject;
      // Tool search loads deferred tools later: they are not part of the cached prefix.
      if (tool.defer_loading === true) return;
      if (isGeminiTool(tool)) tools.push(...geminiTools(tool, at));
      else tools.push({ name: toolName(tool, at), schemaHash: hashContent(tool) });
    }
    if (read.mark) markers.push({ section: 'tools', at: tools.length - 1, ...read.mark });
  });
  return { tools, markers };
}

/**
 * Raw tool definitions of any supported API → ToolRef[] in the order sent,
 * leaving out deferred tools and Bedrock cachePoint entries, and the cache
 * markers on them ("tools@1h"). Throws SnapshotError (field
 * `toolDefinitions[i]…`) when a tool has no name.
 */
export function readRawTools(raw: unknown[]): { tools: ToolRef[]; markers: string[] } {
  const { tools, markers } = readTools(raw, 'toolDefinitions');
  return { tools, markers: markerNames(markers, { tools: tools.length, system: 0, messages: 0 }) };
}
