import type { Releasable } from "./releasable";

/** Token counts as the model servers report them (`usage`). */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** Prompt tokens served from the model server's prefix cache, where it reports them. */
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/**
 * A request's hold on its key's limits across replicas, taken at admission (limits/rate-limiter.ts): a request
 * and a slot, then the tokens it may use. Settled when its usage is known; ended when its response closes.
 */
export interface LimitTicket extends Releasable {
  /** The x-ratelimit-* headers for the response. */
  readonly headers: Record<string, string>;
  /** Reserves `tokens` or throws the 429 envelope; updates `headers`. */
  reserve(tokens: number): Promise<void>;
  /** Charges the difference between the reservation and the usage (see limits/rate-limiter.ts for `began`). */
  settle(usage: Usage | undefined, began: boolean): Promise<void>;
  /** The response closed: the slot goes back (idempotent). */
  release(): void;
}

/** A request's hold on its key's day or month budgets (limits/key-budgets.ts). */
export interface BudgetTicket extends Releasable {
  /** Takes the tokens the request may use, at most what is left, or throws the 429 envelope. */
  reserveTokens(tokens: number): Promise<void>;
  /** Charges the difference between what was taken and the usage. */
  settle(usage: Usage | undefined, began: boolean): Promise<void>;
}
