// The thread pool behind the reader threads, with a thread of its own: answers
// in turn, failures that cross threads with their reason, a thread that dies
// answered 503 and replaced, a thread that cannot start refused at start.
import { describe, expect, it } from 'vitest';
import { ThreadPool } from '../../src/threads/pool.js';

const module = new URL('./echo-thread', import.meta.url);

async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('thread pool', () => {
  it('answers, carries failures back, and replaces a thread that dies', async () => {
    const lines: string[] = [];
    const pool = await ThreadPool.start<string, string>({ name: 'test', module, count: 2, workerData: {} }, (line) => lines.push(line));
    try {
      expect(await Promise.all(['a', 'b', 'c'].map((r) => pool.request(r)))).toEqual(['echo a', 'echo b', 'echo c']);
      await expect(pool.request('throw')).rejects.toThrow('asked to fail');
      // Its class crosses too: a TypeError says the program refused a value it was given (a store's 'data' error).
      const typeError = await pool.request('type').catch((error: unknown) => error);
      expect(typeError).toBeInstanceOf(TypeError);
      expect(typeError).toMatchObject({ message: 'a value it cannot bind' });
      await expect(pool.request('exit')).rejects.toMatchObject({ status: 503, message: 'the test thread stopped (test thread exited with code 3)' });
      expect(lines.join('')).toContain('event=thread_failed thread=test message="test thread exited with code 3" replaced=true');
      // Both threads answer again, the new one included.
      expect(await eventually(() => Promise.all(['d', 'e'].map((r) => pool.request(r))))).toEqual(['echo d', 'echo e']);
    } finally {
      await pool.close();
    }
  });

  it('refuses to start, with the reason, when a thread cannot', async () => {
    await expect(ThreadPool.start({ name: 'test', module, count: 1, workerData: { failStart: true } }, () => {})).rejects.toThrow('SQLITE_CANTOPEN');
  });
});
