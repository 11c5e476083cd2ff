/** Anything a request takes that must be given back once (a slot, a lease, a reservation); release() is idempotent. */
export interface Releasable {
  release(): void;
}
