// Sends each alert as it fires and as it resolves to a URL (serve
// --alert-webhook): a POST of JSON, one at a time in order, each attempt cut
// after WEBHOOK_TIMEOUT_MS and tried at most WEBHOOK_ATTEMPTS times. The
// queue is bounded; nothing waits for it but itself (ingest never does).
// Failures are logged and counted (cachebreak_alert_webhook_failures_total).
import type { Counters } from '../telemetry/counters.js';
import type { Logger } from '../telemetry/logfmt.js';
import { wireAlert, type Alert } from './alerts.js';

export const WEBHOOK_TIMEOUT_MS = 5_000;
export const WEBHOOK_ATTEMPTS = 3;
/** Waits before the second and third attempts. */
const RETRY_DELAYS_MS = [1_000, 4_000];
/** Notifications waiting to be sent, past which the oldest is dropped. */
export const WEBHOOK_QUEUE = 100;

export type WebhookFailure = 'timeout' | 'unreachable' | 'status' | 'queue_full';

export class Webhook {
  private readonly queue: Alert[] = [];
  private sending = false;
  private readonly stopped = new AbortController();

  constructor(
    private readonly url: string,
    private readonly counters: Counters,
    private readonly log: Logger,
  ) {}

  send(alert: Alert): void {
    if (this.stopped.signal.aborted) return;
    this.queue.push(alert);
    if (this.queue.length > WEBHOOK_QUEUE) this.failed(this.queue.shift()!, 'queue_full', `more than ${WEBHOOK_QUEUE} notifications waiting`);
    if (!this.sending) void this.drain();
  }

  /** Stops sending: the attempt in flight is cut, what waits is dropped. */
  close(): void {
    this.stopped.abort();
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    this.sending = true;
    try {
      for (let alert = this.queue.shift(); alert !== undefined && !this.stopped.signal.aborted; alert = this.queue.shift()) await this.deliver(alert);
    } finally {
      this.sending = false;
    }
  }

  private async deliver(alert: Alert): Promise<void> {
    const body = JSON.stringify({ status: alert.state, alert: wireAlert(alert) });
    let problem: { kind: WebhookFailure; message: string } = { kind: 'unreachable', message: '' };
    for (let tried = 0; tried < WEBHOOK_ATTEMPTS; tried++) {
      if (tried > 0 && !(await this.pause(RETRY_DELAYS_MS[tried - 1]!))) return;
      const attempt = this.attempt();
      try {
        const response = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'cachebreak' },
          body,
          signal: attempt.signal,
        });
        await response.body?.cancel();
        if (response.ok) return;
        problem = { kind: 'status', message: `answered ${response.status}` };
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        problem = attempt.timedOut()
          ? { kind: 'timeout', message: `no answer within ${WEBHOOK_TIMEOUT_MS} ms` }
          : { kind: 'unreachable', message: (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message };
      } finally {
        attempt.done();
      }
    }
    this.failed(alert, problem.kind, `${problem.message}, ${WEBHOOK_ATTEMPTS} attempts`);
  }

  /**
   * One attempt's signal: aborted after WEBHOOK_TIMEOUT_MS or when closed.
   * A timer of its own (AbortSignal.timeout's can be collected with the
   * signals combining it, and never fire).
   */
  private attempt(): { signal: AbortSignal; timedOut(): boolean; done(): void } {
    const controller = new AbortController();
    let timedOut = false;
    const stop = () => controller.abort();
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, WEBHOOK_TIMEOUT_MS);
    this.stopped.signal.addEventListener('abort', stop, { once: true });
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      done: () => {
        clearTimeout(timer);
        this.stopped.signal.removeEventListener('abort', stop);
      },
    };
  }

  /** Resolves true after `ms`, or false at once when closed meanwhile. */
  private pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const stop = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.stopped.signal.removeEventListener('abort', stop);
        resolve(true);
      }, ms);
      this.stopped.signal.addEventListener('abort', stop, { once: true });
    });
  }

  private failed(alert: Alert, reason: WebhookFailure, message: string): void {
    this.counters.inc('alertWebhookFailures', { project: alert.project, reason });
    this.log.warn('alert_webhook_failed', { project: alert.project, rule: alert.rule, state: alert.state, reason, message });
  }
}
