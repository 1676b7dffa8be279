// Bedrock Converse request → snapshot: Anthropic's layout, with cachePoint
// blocks for markers and the tools under toolConfig. modelId is usually in the
// URL, so options.model is the common way to name it.
import type { SnapshotContent } from '../types.js';
import { expectArray, expectRecord, modelOf, optionalArray, type JsonObject, type SnapshotOptions } from './common.js';
import { markedSnapshot } from './anthropic.js';

export function bedrockSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  const toolConfig = body.toolConfig === undefined || body.toolConfig === null ? {} : expectRecord(body.toolConfig, 'toolConfig');
  return markedSnapshot({
    model: modelOf(options, body.modelId, 'modelId'),
    tools: optionalArray(toolConfig.tools, 'toolConfig.tools'),
    toolsField: 'toolConfig.tools',
    system: optionalArray(body.system, 'system'),
    messages: expectArray(body.messages, 'messages'),
    trailing: [],
  });
}
