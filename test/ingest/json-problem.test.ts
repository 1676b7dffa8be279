// A body or line that is not JSON is answered with what is wrong and where,
// never with the text itself: V8 quotes the input it could not parse, and a
// telemetry line can be prompt text.
import { describe, expect, it } from 'vitest';
import { testApp } from '../serve/harness.js';

const PROMPT = 'You are a helpful assistant; the user asked about their tax return';

describe('JSON errors', () => {
  it('name the problem without quoting the input', async () => {
    const { post, logLines } = testApp();
    const ndjson = await post(`${PROMPT}\n{"type":"usage"}\n`, { 'content-type': 'application/x-ndjson' });
    const reply = JSON.stringify(await ndjson.json());
    expect(reply).toContain("events[0]: line 1: not valid JSON (Unexpected token 'Y')");
    const body = await post(PROMPT);
    const error = JSON.stringify(await body.json());
    expect(body.status).toBe(400);
    expect(error).toContain("body is not JSON: Unexpected token 'Y'");
    for (const text of [reply, error, ...logLines]) expect(text).not.toContain('You are');
  });
});
