/**
 * The memory request bodies may occupy: gateway-wide, and per API key so that one key stalling its uploads
 * leaves the rest to everybody else. A request reserves its upper bound (the declared length, or the body
 * limit when the length is unknown) before a byte of its body is read, and gives the bytes back once the
 * model server has its answer under way (or the request ended).
 */
export class BodyBudget {
  private reserved = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    readonly totalBytes: number,
    readonly perKeyBytes: number,
  ) {}

  /** Bytes currently reserved by all requests. */
  get reservedBytes(): number {
    return this.reserved;
  }

  reservedBy(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** A lease on `bytes`, or which share would be exceeded. */
  reserve(key: string, bytes: number): BodyLease | "key" | "gateway" {
    const held = this.reservedBy(key);
    if (held + bytes > this.perKeyBytes) return "key";
    if (this.reserved + bytes > this.totalBytes) return "gateway";
    this.adjust(key, bytes);
    return new BodyLease(this, key, bytes);
  }

  /** @internal Used by leases to resize and return their bytes. */
  adjust(key: string, delta: number): void {
    this.reserved += delta;
    const next = this.reservedBy(key) + delta;
    if (next > 0) this.byKey.set(key, next);
    else this.byKey.delete(key);
  }
}

export class BodyLease {
  private released = false;

  constructor(
    private readonly budget: BodyBudget,
    private readonly key: string,
    private bytes: number,
  ) {}

  get size(): number {
    return this.released ? 0 : this.bytes;
  }

  /** Once the real size is known: usually smaller than reserved (a rewritten body may be a few bytes larger). */
  resize(bytes: number): void {
    if (this.released) return;
    this.budget.adjust(this.key, bytes - this.bytes);
    this.bytes = bytes;
  }

  /** Idempotent: called when the body is no longer needed and again, as a safety net, when the request closes. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.adjust(this.key, -this.bytes);
  }
}
