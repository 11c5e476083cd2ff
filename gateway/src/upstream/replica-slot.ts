import type { AdapterClaim } from "./lora/adapter-claim";
import type { Replica } from "./replica";

/** Who takes a slot back (the model's pool). */
export interface SlotOwner {
  giveBack(slot: ReplicaSlot): void;
}

/**
 * The slot one request holds on the replica it was given (model-pool.ts): the replica's in-flight count, its key's
 * share of the model, and its adapter claim. Given back once, however often release() is called.
 */
export class ReplicaSlot {
  private released = false;

  constructor(
    readonly replica: Replica,
    /** The request's adapter on that replica, for a request for an adapter the gateway places. */
    readonly claim: AdapterClaim | undefined,
    /** The key whose share of the model the slot counts in. */
    readonly keyName: string,
    private readonly owner: SlotOwner,
  ) {}

  get held(): boolean {
    return !this.released;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.giveBack(this);
  }
}
