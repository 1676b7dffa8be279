// A client as an attacker writes it: the body goes out in chunks however the
// server answers, and the result is the status, or the error that cut the
// connection (EPIPE, ECONNRESET) when the server stopped listening first;
// or a connection that sends nothing at all.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

const TIMEOUT_MS = 15_000;

/** POSTs `chunks` (chunked, no Content-Length) on a connection of its own. */
export function postChunks(url: string, path: string, chunks: readonly Buffer[], headers: Record<string, string> = {}): Promise<number | string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let status: number | undefined;
    const req = request({ host: hostname, port, path, method: 'POST', headers, agent: false, timeout: TIMEOUT_MS }, (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => resolve(status!));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    // Cut while still writing: the answer counts if it arrived first.
    req.on('error', (error: NodeJS.ErrnoException) => resolve(status ?? error.code ?? error.message));
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

export interface Stalled {
  /** The status the server answered, or the error that cut the connection; and when, in ms after the last byte was sent. */
  reply: Promise<{ status: number | string; afterMs: number }>;
}

/** POSTs all but the last byte of `body` (with its full Content-Length) and then sends nothing more. */
export function stalledUpload(url: string, path: string, body: Buffer, headers: Record<string, string> = {}): Stalled {
  const { hostname, port } = new URL(url);
  let sentAt = Date.now();
  const reply = new Promise<{ status: number | string; afterMs: number }>((resolve) => {
    const req = request({ host: hostname, port, path, method: 'POST', headers: { ...headers, 'content-length': String(body.length) }, agent: false, timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, afterMs: Date.now() - sentAt }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: error.code ?? error.message, afterMs: Date.now() - sentAt }));
    req.write(body.subarray(0, body.length - 1), () => void (sentAt = Date.now()));
  });
  return { reply };
}

/** A TCP connection that sends nothing; resolves once connected (or refused). */
export function idleSocket(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    // Reads what the server sends, so that its closing is seen.
    socket.resume();
    socket.once('connect', () => resolve(socket));
    socket.once('close', () => resolve(socket));
  });
}

export const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));
