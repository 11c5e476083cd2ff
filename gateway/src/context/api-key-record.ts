/** The key that authenticated a request, as auth/api-keys.ts keeps it (never the key itself: its name and limits). */
export interface ApiKeyRecord {
  name: string;
  models?: ReadonlySet<string>;
  expiresAt?: Date;
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
}
