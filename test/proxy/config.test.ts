// The proxy's options: a port, and one upstream per provider, each an http(s)
// base URL without credentials, query or fragment.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseOptions } from '../../src/config.js';

const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseOptions(['proxy-port', 'anthropic-upstream', 'openai-upstream', 'gemini-upstream'], argv, env).values;

describe('proxy options', () => {
  it('defaults to port 4319 and the providers\' public APIs', () => {
    expect(parse([])).toEqual({
      'proxy-port': 4319,
      'anthropic-upstream': 'https://api.anthropic.com',
      'openai-upstream': 'https://api.openai.com',
      'gemini-upstream': 'https://generativelanguage.googleapis.com',
    });
  });

  it('takes a base URL with a path, from a flag or the environment, without its trailing slash', () => {
    expect(parse(['--openai-upstream', 'https://dashscope.aliyuncs.com/compatible-mode/'])['openai-upstream']).toBe('https://dashscope.aliyuncs.com/compatible-mode');
    expect(parse([], { CACHEBREAK_GEMINI_UPSTREAM: 'http://127.0.0.1:9000' })['gemini-upstream']).toBe('http://127.0.0.1:9000');
    expect(parse(['--proxy-port', '0'])['proxy-port']).toBe(0);
  });

  it('refuses what cannot be a base URL, saying why', () => {
    expect(() => parse(['--anthropic-upstream', 'ftp://example.com'])).toThrow(new ConfigError('--anthropic-upstream: expected an http:// or https:// URL, got "ftp://example.com"'));
    expect(() => parse(['--openai-upstream', 'https://user:secret@gw.example.com'])).toThrow(/--openai-upstream: the URL carries credentials/);
    expect(() => parse(['--openai-upstream', 'https://user:secret@gw.example.com'])).not.toThrow(/secret/);
    expect(() => parse(['--gemini-upstream', 'https://gw.example.com/?key=1'])).toThrow(new ConfigError('--gemini-upstream: expected a base URL without ?query or #fragment, such as https://api.anthropic.com'));
    expect(() => parse(['--proxy-port', '70000'])).toThrow(new ConfigError('--proxy-port: expected a whole number from 0 to 65535, got "70000"'));
  });
});
