/**
 * A resource shared by API keys: a gateway-wide total and a share per key, so that one key holding all it may
 * leaves the rest to everybody else. Used for request-body memory (a request reserves its upper bound, the
 * declared length or the body limit, before a byte of its body is read, and gives the bytes back once they are
 * sent to the model server or the request ended), for memory of answers held until their clients take them, and,
 * counted in requests, for the requests in progress.
 *
 * A lease may be parked (a request body while its request waits for a replica): its units then count in a second
 * gateway-wide total, `parkedTotal`, instead of `total`, and still in its key's share, until it is unparked (its
 * request got a replica) or released. Waiting requests so take no room from requests that can go, and what they
 * hold is bounded on its own.
 *
 * For request bodies, when the gateway-wide budget is full, uploads still in progress (leases marked
 * `uploading`) of the key holding the most yield to a key holding less (oldest first): several keys stalling
 * uploads together cannot starve the others either.
 */
export class KeyedBudget {
  private used = 0;
  private parkedUsed = 0;
  private readonly byKey = new Map<string, number>();
  /** Leases whose body is still arriving, per key, oldest first: the ones that may be preempted. */
  private readonly uploading = new Map<string, Set<BudgetLease>>();

  constructor(
    readonly total: number,
    readonly perKey: number,
    /** Units parked leases may hold together (0: none may park). */
    readonly parkedTotal = 0,
  ) {}

  /** Units (bytes, or requests) currently reserved by all keys, parked ones included. */
  get reserved(): number {
    return this.used + this.parkedUsed;
  }

  /** Units of parked leases. */
  get parked(): number {
    return this.parkedUsed;
  }

  reservedBy(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** A lease on `bytes`, or which share would be exceeded. */
  reserve(key: string, bytes: number): BudgetLease | "key" | "gateway" {
    const wanted = this.reservedBy(key) + bytes;
    if (wanted > this.perKey) return "key";
    while (this.used + bytes > this.total) {
      if (!this.preemptFor(key, wanted)) return "gateway";
    }
    this.adjust(key, bytes);
    return new BudgetLease(this, key, bytes);
  }

  /** Preempts the oldest upload of the key holding the most, if it holds more than `wanted`. */
  private preemptFor(key: string, wanted: number): boolean {
    let victim: string | undefined;
    for (const [k, leases] of this.uploading) {
      if (k !== key && leases.size > 0 && this.reservedBy(k) > wanted && (!victim || this.reservedBy(k) > this.reservedBy(victim))) victim = k;
    }
    const lease = victim ? this.uploading.get(victim)!.values().next().value : undefined;
    if (!lease) return false;
    lease.preempt();
    return true;
  }

  /** @internal Lease bookkeeping. */
  adjust(key: string, delta: number, parked = false): void {
    if (parked) this.parkedUsed += delta;
    else this.used += delta;
    const next = this.reservedBy(key) + delta;
    if (next > 0) this.byKey.set(key, next);
    else this.byKey.delete(key);
  }

  /** @internal Moves a lease's units from `total` to `parkedTotal`, if they fit there. */
  park(key: string, units: number): boolean {
    if (this.parkedUsed + units > this.parkedTotal) return false;
    this.used -= units;
    this.parkedUsed += units;
    return true;
  }

  /** @internal Moves a parked lease's units back to `total`, if they fit there. */
  unpark(units: number): boolean {
    if (this.used + units > this.total) return false;
    this.parkedUsed -= units;
    this.used += units;
    return true;
  }

  /** @internal */
  setUploading(key: string, lease: BudgetLease, uploading: boolean): void {
    let set = this.uploading.get(key);
    if (uploading) {
      if (!set) this.uploading.set(key, (set = new Set()));
      set.add(lease);
    } else if (set) {
      set.delete(lease);
      if (set.size === 0) this.uploading.delete(key);
    }
  }
}

export class BudgetLease {
  private released = false;
  private parked = false;
  private onPreempt: (() => void) | undefined;

  constructor(
    private readonly budget: KeyedBudget,
    private readonly key: string,
    private bytes: number,
  ) {}

  get size(): number {
    return this.released ? 0 : this.bytes;
  }

  /** Its units count in the budget's parked total (its request waits, or waited, for a replica). */
  get isParked(): boolean {
    return this.parked && !this.released;
  }

  /** While the body arrives the lease may be preempted: then `onPreempt` runs (after the bytes are returned). */
  uploading(onPreempt: () => void): void {
    if (this.released) return;
    this.onPreempt = onPreempt;
    this.budget.setUploading(this.key, this, true);
  }

  /** The body has arrived: it is no longer preemptible. */
  uploaded(): void {
    this.onPreempt = undefined;
    this.budget.setUploading(this.key, this, false);
  }

  /** Once the real size is known: usually smaller than reserved (a rewritten body may be a few bytes larger). */
  resize(bytes: number): void {
    if (this.released) return;
    this.budget.adjust(this.key, bytes - this.bytes, this.parked);
    this.bytes = bytes;
  }

  /**
   * Its request waits (for a replica): its units move to the budget's parked total, where they stay until released.
   * False when they do not fit there; true if released or parked already.
   */
  park(): boolean {
    if (this.released || this.parked) return true;
    if (!this.budget.park(this.key, this.bytes)) return false;
    this.parked = true;
    return true;
  }

  /** Its request waits no more: its units go back to the budget's total if they fit there, else stay parked. */
  unpark(): void {
    if (!this.released && this.parked && this.budget.unpark(this.bytes)) this.parked = false;
  }

  /** Idempotent: called when the body is no longer needed and again, as a safety net, when the request closes. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.setUploading(this.key, this, false);
    this.budget.adjust(this.key, -this.bytes, this.parked);
  }

  /** @internal Called by the budget to make room. */
  preempt(): void {
    const notify = this.onPreempt;
    this.release();
    notify?.();
  }
}
