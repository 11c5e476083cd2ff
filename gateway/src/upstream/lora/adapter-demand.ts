/** How long a request counts for half as much in an adapter's demand, ms. */
const HALF_LIFE_MS = 60_000;

/**
 * How much each adapter of a model is asked for lately, as this gateway pod sees it: a count of requests decayed
 * exponentially (half-life 1 min), the same on every replica. What to unload is chosen by it (replica-adapters.ts).
 */
export class AdapterDemand {
  private readonly counts = new Map<string, { value: number; at: number }>();

  hit(name: string, now: number): void {
    this.counts.set(name, { value: this.of(name, now) + 1, at: now });
  }

  of(name: string, now: number): number {
    const c = this.counts.get(name);
    return c ? c.value * 2 ** (-(now - c.at) / HALF_LIFE_MS) : 0;
  }
}
