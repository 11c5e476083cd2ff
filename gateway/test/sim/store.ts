import type { Prng } from "../../../simulator/src/prng";
import { LocalBuckets, type AdmitResult, type Buckets, type KeyLimits, type ReserveResult } from "../../src/limits/buckets";
import type { VirtualClock } from "./virtual-clock";

export interface SimStoreOptions {
  windowMs: number;
  /** How long a slot lives without renewal (Redis: the lease's TTL). */
  leaseMs: number;
  /** Each command's time to the store and back, ms. */
  delayMs: () => number;
  /** Whether the store answers now (false: a fault window, commands time out). */
  up: () => boolean;
  /** A command that fails still ran at the store this often (its reply was lost). */
  lostReplyRate: number;
}

/**
 * The shared limits store as the gateway meets Redis: each command runs at the store a moment after it is sent and
 * answers a moment later; in a fault window it fails after the command timeout, having run or not; a slot lives as a
 * lease and expires unless renewed. The rules are LocalBuckets' (the same Lua rules), on the virtual clock.
 */
export class SimStore implements Buckets {
  readonly inner: LocalBuckets;
  private readonly leases = new Map<string, { name: string; expiresAt: number }>();
  /** Slots released, to catch a second release of one. */
  private readonly released = new Set<string>();
  readonly doubleReleases: string[] = [];
  /** Whether any command failed: then what reached the store is not exactly what the limiter meant. */
  failed = false;

  constructor(
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly o: SimStoreOptions,
  ) {
    this.inner = new LocalBuckets(() => clock.now(), o.windowMs);
  }

  admit(name: string, limits: KeyLimits, slot: string): Promise<AdmitResult> {
    return this.command(async () => {
      const result = await this.inner.admit(name, limits, slot);
      if (result.allowed && limits.maxConcurrent) this.lease(name, slot);
      return result;
    });
  }

  reserve(name: string, tpm: number, tokens: number): Promise<ReserveResult> {
    return this.command(() => this.inner.reserve(name, tpm, tokens));
  }

  charge(name: string, tpm: number, tokens: number): Promise<void> {
    return this.command(() => this.inner.charge(name, tpm, tokens));
  }

  release(name: string, slot: string): Promise<void> {
    return this.command(async () => {
      if (this.released.has(slot)) this.doubleReleases.push(slot);
      this.released.add(slot);
      this.leases.delete(slot);
      await this.inner.release(name, slot);
    });
  }

  renew(slots: readonly (readonly [name: string, slot: string])[]): Promise<void> {
    return this.command(async () => {
      for (const [name, slot] of slots) if (this.leases.has(slot)) this.lease(name, slot);
    });
  }

  ping(): Promise<void> {
    return this.command(async () => undefined);
  }

  /** Slots held now (leases not expired), per key. */
  slotsOf(name: string): number {
    let n = 0;
    for (const l of this.leases.values()) if (l.name === name) n += 1;
    return n;
  }

  /** The key's token bucket level now (no refill: the simulation's window is far longer than a run). */
  async tokensLevel(name: string, tpm: number): Promise<number> {
    return (await this.inner.reserve(name, tpm, 0)).tokensLevel;
  }

  private lease(name: string, slot: string): void {
    const expiresAt = this.clock.now() + this.o.leaseMs;
    this.leases.set(slot, { name, expiresAt });
    this.clock.after(this.o.leaseMs, () => {
      const l = this.leases.get(slot);
      if (l && l.expiresAt <= this.clock.now()) {
        this.leases.delete(slot);
        void this.inner.release(name, slot);
      }
    });
  }

  private command<T>(run: () => Promise<T>): Promise<T> {
    const there = this.o.delayMs();
    const back = this.o.delayMs();
    return new Promise<T>((resolve, reject) => {
      if (!this.o.up()) {
        this.failed = true;
        const ran = this.rng.next() < this.o.lostReplyRate;
        this.clock.after(there, () => {
          if (ran) void run();
          this.clock.after(back, () => reject(Object.assign(new Error("Command timed out"), { code: "ETIMEDOUT" })));
        });
        return;
      }
      this.clock.after(there, () => {
        run().then(
          (value) => this.clock.after(back, () => resolve(value)),
          (err: unknown) => this.clock.after(back, () => reject(err as Error)),
        );
      });
    });
  }
}
