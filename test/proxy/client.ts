// A plain HTTP/1.1 client for the proxy: the exact bytes of an answer, and
// requests no SDK would send (absolute URIs, unknown prefixes, a disconnect).
import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes `text` as is on a new connection and returns everything read until the server closes it (or 5 s). */
export function sendRaw(base: string, text: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(text));
    let read = '';
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (part) => (read += part.toString()));
    socket.on('close', () => resolve(read));
    socket.on('error', reject);
  });
}
