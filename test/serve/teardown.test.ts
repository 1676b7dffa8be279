// The one list a start closes by: reverse order, a step at a time, a
// together() step all at once, past a closer that fails, and only once.
import { describe, expect, it } from 'vitest';
import { Teardown } from '../../src/teardown.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('Teardown', () => {
  it('closes the last started first, each step after the one before, a together() step at once; once', async () => {
    const failures: string[] = [];
    const teardown = new Teardown((error) => failures.push(error.message));
    const events: string[] = [];
    const step = (name: string) => async () => {
      events.push(`${name} begins`);
      await tick();
      events.push(`${name} ends`);
    };
    teardown.add(step('store'));
    teardown.add(() => {
      throw new Error('readers would not stop');
    });
    const ports = teardown.together();
    teardown.add(step('last'));
    ports.add(step('http'));
    ports.add(step('grpc'));
    await Promise.all([teardown.run(), teardown.run()]);
    await teardown.run();
    expect(events).toEqual(['last begins', 'last ends', 'http begins', 'grpc begins', 'http ends', 'grpc ends', 'store begins', 'store ends']);
    expect(failures).toEqual(['readers would not stop']);
  });
});
