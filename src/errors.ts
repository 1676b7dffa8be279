// One error type for everything the API answers with a failure, rendered in
// one place (app.onError). Each code has one status; each error says what to do.
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export const ERROR_STATUS = {
  bad_request: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Failures answered before the whole body was read: the connection cannot carry another request. */
export function leftBodyUnread(code: ErrorCode): boolean {
  return code === 'payload_too_large' || code === 'request_timeout';
}

export class CachebreakError extends HTTPException {
  readonly code: ErrorCode;
  readonly hint: string;
  /** Seconds a client should wait before retrying (429/503). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, hint: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(ERROR_STATUS[code], { message, cause: options.cause });
    this.code = code;
    this.hint = hint;
    this.retryAfter = options.retryAfter;
  }
}
