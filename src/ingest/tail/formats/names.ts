// The formats `tail` reads, by name: the option table and the readers share this list.
export const FORMATS = ['ndjson', 'otel-file', 'claude-debug', 'qwen-debug', 'qwen-openai'] as const;
export type Format = (typeof FORMATS)[number];
