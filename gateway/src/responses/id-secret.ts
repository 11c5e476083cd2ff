import { randomBytes } from "node:crypto";
import type Redis from "ioredis";
import type { Logger } from "../observability/logger";

/** Where gateways sharing a Redis keep the secret of response ids when none is configured. */
export const SHARED_SECRET_KEY = "gateway:responses:id-secret";

/**
 * The secret response ids are made with (response-ids.ts). Every gateway replica must hold the same one, and
 * keep it across restarts, or follow-ups of responses another replica (or an earlier process) made answer 404:
 * `GATEWAY_RESPONSE_ID_SECRET` when set; else, with Redis, one shared there (the first gateway to start writes
 * it, the others read it; no expiry); else a random one for this process alone, said once in the log.
 */
export async function responseIdSecret(configured: string | undefined, redis: Redis | undefined, log: Logger): Promise<Buffer> {
  if (configured) return Buffer.from(configured, "utf8");
  if (redis) {
    try {
      await redis.set(SHARED_SECRET_KEY, randomBytes(32).toString("hex"), "NX");
      const shared = await redis.get(SHARED_SECRET_KEY);
      if (shared) return Buffer.from(shared, "utf8");
    } catch (err) {
      log.warn({ err: (err as Error).message }, "response ids: Redis did not answer for the shared secret; using this process's own (set GATEWAY_RESPONSE_ID_SECRET)");
      return randomBytes(32);
    }
  }
  log.warn("response ids: no GATEWAY_RESPONSE_ID_SECRET and no Redis; stored responses can be followed up only through this gateway process");
  return randomBytes(32);
}
