/** How a key's requests are ordered against others' when a model is busy: `batch` waits behind `interactive`. */
export type Priority = "interactive" | "batch";

/** Priorities in the order they are served. */
export const PRIORITIES: readonly Priority[] = ["interactive", "batch"];

/** The key that authenticated a request, as auth/api-keys.ts keeps it (never the key itself: its name and limits). */
export interface ApiKeyRecord {
  name: string;
  models?: ReadonlySet<string>;
  expiresAt?: Date;
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  /** How its requests are ordered when a model is busy (upstream/scheduler/); absent: interactive. */
  priority?: Priority;
  /** Its share of a busy model's slots relative to other keys of its priority; absent: 1. */
  weight?: number;
  /** Tokens and/or requests per UTC day or month, across replicas (limits/budgets.ts). */
  budget?: { tokens?: number; requests?: number; period: "day" | "month" };
}
