/** Bucket bounds (seconds) of the inter-token histogram: 1 ms to 1 s. */
export const ITL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1] as const;

/** Where a stream's timings go once it ends: the model's time to first token, its inter-token gaps. */
export interface TokenTimingSink {
  firstToken(seconds: number): void;
  /** One stream's inter-token gaps as per-bucket counts (non-cumulative; the last is above every bound), their sum. */
  interTokens(bucketCounts: Uint32Array, sumSeconds: number): void;
}

/**
 * The token timing of one stream. The first token is reported as it comes; inter-token gaps are counted into
 * the stream's own buckets (an array increment per token, no metric observation, no labels) and handed to the
 * histogram once, when the stream ends.
 */
export class TokenClock {
  private readonly started = performance.now();
  private last = -1;
  private readonly counts = new Uint32Array(ITL_BUCKETS.length + 1);
  private sum = 0;
  private gaps = 0;

  constructor(private readonly sink: TokenTimingSink) {}

  token(): void {
    const now = performance.now();
    if (this.last < 0) this.sink.firstToken((now - this.started) / 1000);
    else {
      const gap = (now - this.last) / 1000;
      let i = 0;
      while (i < ITL_BUCKETS.length && gap > ITL_BUCKETS[i]!) i++;
      this.counts[i]!++;
      this.sum += gap;
      this.gaps++;
    }
    this.last = now;
  }

  /** The stream ended: its gaps go to the histogram. */
  flush(): void {
    if (this.gaps === 0) return;
    this.sink.interTokens(this.counts, this.sum);
    this.counts.fill(0);
    this.sum = 0;
    this.gaps = 0;
  }
}
