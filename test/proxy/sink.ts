// An upstream that reads each request body without keeping it (the large
// bodies of the limit tests would otherwise fill the test's own memory),
// counts the bodies that arrived whole and those cut off, and answers as the
// test says once a body has arrived.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SinkUpstream {
  url: string;
  /** Bodies that arrived whole, and bodies whose connection closed first. */
  whole: number;
  cut: number;
  close(): Promise<void>;
}

/** `readAfterMs`: how long each request body is left unread first (the proxy must then hold back its client). */
export async function sinkUpstream(answer: (res: ServerResponse) => void, readAfterMs = 0): Promise<SinkUpstream> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    req.on('error', () => {});
    req.on('close', () => {
      if (!req.complete) sink.cut++;
    });
    req.on('end', () => {
      sink.whole++;
      answer(res);
    });
    setTimeout(() => req.resume(), readAfterMs);
  });
  const sink: SinkUpstream = {
    url: '',
    whole: 0,
    cut: 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

/** A small Anthropic Messages answer, with usage. */
export const MESSAGE = '{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}';

export function answerMessage(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(MESSAGE);
}
