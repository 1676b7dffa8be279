// `serve` and `proxy` take options only: a stray argument stops them with
// exit 2 before anything opens, and says how to pass options through npm
// (`npm start --port 4400` gives --port to npm and 4400 to the command).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

describe('serve and proxy: options only', () => {
  for (const command of ['serve', 'proxy']) {
    it(`${command} refuses a stray argument with exit 2 and the -- form, opening no database`, async () => {
      const db = join(tempDir(), 'never.db');
      const result = await cli([command, '--db', db, '4400']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`cachebreak ${command}: unexpected argument "4400": ${command} takes options only (--name value); through npm, put them after --: npm start -- --port 4400\n`);
      expect(existsSync(db)).toBe(false);
    });
  }

  it('names the option npm kept for itself, as `npm start --port 4400` and `npm start --port=4400 --db x.db` leave it', async () => {
    const db = join(tempDir(), 'never.db');
    // What npm passes for `npm start --port 4400`: npm_config_port=true, and 4400 alone.
    const spaced = await cli(['serve', '--db', db, '4400'], { env: { npm_lifecycle_event: 'start', npm_config_port: 'true' } });
    expect(spaced.code).toBe(2);
    expect(spaced.stderr).toBe('cachebreak serve: npm kept --port for itself and passed on "4400"; put options after --: npm start -- --port 4400\n');
    // `npm start --port=4400 --db x.db`: nothing stray, both options in npm's variables.
    const joined = await cli(['serve'], { env: { npm_lifecycle_event: 'start', npm_config_port: '4400', npm_config_db: db } });
    expect(joined.code).toBe(2);
    expect(joined.stderr).toBe(`cachebreak serve: npm kept --port, --db for itself; put options after --: npm start -- --port 4400 --db ${db}\n`);
    expect(existsSync(db)).toBe(false);
    // Outside npm, a variable of that name is nobody's flag.
    const outside = await cli(['serve', '--db', db, '--port', 'x'], { env: { npm_config_port: '4400' } });
    expect(outside.stderr).not.toContain('npm kept');
  });
});
