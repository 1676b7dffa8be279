// A TCP relay on loopback between a node and PostgreSQL, that the test can
// cut (stop forwarding in both directions without closing anything, as a
// network partition does) and restore, or have lose the database's answer to
// a statement (the connection breaks after the database did it).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Relay {
  /** The relay's port, for a --db URL. */
  port: number;
  /** `url` with the relay's host and port. */
  through(url: string): string;
  cut(): void;
  restore(): void;
  /** The next answer of the database that holds `bytes` is not passed on: both sides are closed instead. */
  loseAnswer(bytes: Buffer): void;
  close(): Promise<void>;
}

export async function startRelay(target: { host: string; port: number }): Promise<Relay> {
  const pairs = new Set<[Socket, Socket]>();
  let cut = false;
  let lose: Buffer | undefined;
  const flow = ([a, b]: [Socket, Socket]) => {
    a.pipe(b);
    b.pipe(a);
  };
  /** Watches the database's side for the answer to lose. */
  const watch = ([client, upstream]: [Socket, Socket]) => {
    upstream.on('data', (chunk: Buffer) => {
      if (lose === undefined || !chunk.includes(lose)) return;
      lose = undefined;
      upstream.unpipe(client);
      client.destroy();
      upstream.destroy();
    });
  };
  const stall = ([a, b]: [Socket, Socket]) => {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Listened to before piping: a chunk to lose is seen, and the pipe undone, before it is written on.
    watch(pair);
    if (cut) stall(pair);
    else flow(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    through(url) {
      const parsed = new URL(url);
      parsed.host = `127.0.0.1:${port}`;
      return parsed.toString();
    },
    cut() {
      cut = true;
      for (const pair of pairs) stall(pair);
    },
    restore() {
      cut = false;
      for (const pair of pairs) flow(pair);
    },
    loseAnswer(bytes) {
      lose = bytes;
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
