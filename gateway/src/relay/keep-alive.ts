import type { ServerResponse } from "node:http";
import { startEventStream } from "./sse-events";

/** A stream held for its model to wake gets its first comment this soon, not after the usual delay. */
export const HELD_FIRST_BEAT_MS = 500;

/**
 * While a streaming request waits (queue, prefill of a long prompt behind a slow proxy), idle connections get
 * cut by proxies and by Node fetch's ~5-minute body timeout. After `afterMs` the gateway commits to a 200 event
 * stream and sends SSE comments, which clients ignore; errors after that travel as SSE error events.
 */
export class SseKeepAlive {
  private timer: NodeJS.Timeout | undefined;
  private beating = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly afterMs: number,
  ) {
    if (afterMs > 0) this.timer = setTimeout(() => this.beat(), afterMs);
  }

  /** The request is held for a model waking from zero, which takes minutes: commit and beat within a second. */
  held(): void {
    if (!this.timer || this.beating) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.beat(), Math.min(this.afterMs, HELD_FIRST_BEAT_MS));
  }

  private beat(): void {
    this.beating = true;
    if (this.res.destroyed || this.res.writableEnded) return;
    if (!this.res.headersSent) startEventStream(this.res);
    this.res.write(": keep-alive\n\n");
    this.timer = setTimeout(() => this.beat(), this.afterMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
