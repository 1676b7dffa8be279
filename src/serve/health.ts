import type { Hono } from 'hono';
import type { AppEnv, AppDeps } from '../app.js';
import { CachebreakError } from '../errors.js';

export function registerHealth(app: Hono<AppEnv>, deps: AppDeps): void {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await deps.store.ping();
    } catch (error) {
      throw new CachebreakError('unavailable', 'the database does not answer', 'check the server log', { retryAfter: 5, cause: error });
    }
    return c.json({ status: 'ready' });
  });
}
