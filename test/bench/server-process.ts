// A cachebreak server in its own process, as users run it, for benchmarks.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

export interface ServerProcess {
  url: string;
  /** The provider proxy's URL, for `cachebreak proxy`. */
  proxyUrl: string | undefined;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startServerProcess(db: string, extra: string[] = [], command: 'serve' | 'proxy' = 'serve'): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, command, '--host', '127.0.0.1', '--port', '0', '--grpc-port', 'off', '--db', db, ...extra], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [url, proxyUrl] = await new Promise<[string, string | undefined]>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start within 20 s')), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s,]+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve([match[1]!, /proxy on (http:\/\/[^\s,]+)/.exec(out)?.[1]]);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    url,
    proxyUrl,
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
