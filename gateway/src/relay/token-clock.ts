import { ITL_BUCKETS, type TokenTimingSink } from "../observability/metrics";
import { bucketOf } from "../observability/prebuilt-series";

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
      this.counts[bucketOf(ITL_BUCKETS, gap)]!++;
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
