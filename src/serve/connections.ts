// How many connections each port keeps, and for how long: a cap on open
// connections (--max-connections) so that idle ones cannot exhaust file
// descriptors, and timeouts short enough that idle ones soon make room.
import type { ServerOptions } from 'node:http';

export const DEFAULT_MAX_CONNECTIONS = 1024;

/** How long a connection may take to send a request's headers, idle ones included (--headers-timeout). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** A whole request, however slowly its body arrives (each pause is bounded by --body-timeout). */
export const REQUEST_TIMEOUT_MS = 120_000;

/** An HTTP/2 (OTLP/gRPC) connection with no call in flight. */
export const GRPC_IDLE_TIMEOUT_MS = 120_000;

/** Node's HTTP server settings for the main port; between requests, Node's own 5 s keep-alive timeout applies. */
export function httpServerOptions(headersTimeoutMs: number): ServerOptions {
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // How often the timeouts are checked: Node's default of 30 s would let idle connections stay that much longer.
    connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
  };
}
