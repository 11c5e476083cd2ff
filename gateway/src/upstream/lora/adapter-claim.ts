import type { Replica } from "../replica";
import type { HeldAdapter } from "./replica-adapters";

/** What a claim tells the adapters it came from (pool-adapters.ts). */
export interface ClaimOwner {
  now(): number;
  /** Something a waiting request may depend on changed (an adapter turned idle, or is gone). */
  changed(): void;
}

/**
 * One request's use of an adapter on the replica it was routed to. A claim belongs to the entry it was made on:
 * once the entry is gone from the replica's state (it restarted, a 404 said the adapter is gone, a load failed), a
 * late release touches only that old entry, never a newer request's.
 */
export class AdapterClaim {
  private released = false;

  constructor(
    readonly replica: Replica,
    readonly name: string,
    private readonly entry: HeldAdapter,
    private readonly owner: ClaimOwner,
  ) {
    entry.inFlight += 1;
    entry.lastUsed = owner.now();
  }

  /** The replica's state still holds this entry: what the claim waited for is what the replica is believed to have. */
  get current(): boolean {
    return this.replica.adapters?.held.get(this.name) === this.entry;
  }

  /** A load of it is under way there (ready() will wait for it). */
  get loading(): boolean {
    return this.entry.loading !== undefined;
  }

  /** Resolves once the adapter is usable there (at once, or when the load under way ends); rejects if it failed. */
  ready(): Promise<void> {
    return this.entry.loading ?? Promise.resolve();
  }

  /** The replica answered 404 for the adapter: it is not there (another gateway pod unloaded it, or it restarted). */
  notLoaded(): void {
    if (this.replica.adapters?.forget(this.name, this.entry, this.owner.now())) this.owner.changed();
  }

  /** Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.entry.inFlight -= 1;
    this.entry.lastUsed = this.owner.now();
    if (this.entry.inFlight === 0) this.owner.changed();
  }
}
