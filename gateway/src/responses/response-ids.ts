import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { errors } from "../api/errors";
import type { ModelPool } from "../upstream/model-pool";
import type { ModelRegistry } from "../upstream/registry";
import type { Replica } from "../upstream/replica";

/**
 * Response ids that carry their own routing. A stored response lives in one vLLM replica's memory, so every
 * follow-up (GET, cancel, `previous_response_id`) must reach that replica. The gateway chooses the id (vLLM
 * takes the `request_id` body field as the response id) as
 *
 *   resp_ <nonce: 24 hex> <replica: 8 hex> <owner: 16 hex>
 *
 * `replica` is a keyed hash of the replica's address (opaque: clients never see pod addresses) and `owner` a MAC
 * of everything before it and the key's name. Any gateway holding the same secret (another replica, or this one
 * after a restart, with no shared state and no lookup) finds the replica by hashing the addresses it knows, and
 * answers 404 to a key that does not own the id. The MAC is also what stops a client from aiming a follow-up at
 * a replica of its choosing by editing the id. A directory (id → replica, in Redis or an LRU) was rejected: a round
 * trip per follow-up, failure with Redis, forgotten ids, and the owner to store besides.
 */

const PREFIX = "resp_";
const NONCE_HEX = 24;
const TAG_HEX = 8;
const MAC_HEX = 16;
/** Length of the part stamped once the replica is known (replica tag and owner MAC). */
const STAMP_HEX = TAG_HEX + MAC_HEX;
const ID_PATTERN = new RegExp(`^${PREFIX}[0-9a-f]{${NONCE_HEX + STAMP_HEX}}$`);
/** Tags of replica addresses, cached (addresses change only when replicas do); cleared when it grows past this. */
const TAG_CACHE_MAX = 4096;

/** Where a stored response lives: the replica, and the model it belongs to. */
export interface ResponseHome {
  pool: ModelPool;
  replica: Replica;
}

export class ResponseIds {
  private readonly tags = new Map<string, string>();

  constructor(private readonly secret: Buffer) {}

  /** A new id with its replica and owner parts still zero: stamped per attempt once a replica is picked. */
  placeholder(): string {
    return PREFIX + randomBytes(NONCE_HEX / 2).toString("hex") + "0".repeat(STAMP_HEX);
  }

  /** The replica and owner parts of `id` (STAMP_HEX characters) for a response made at `replica` for `keyName`. */
  stamp(id: string, replicaUrl: string, keyName: string): string {
    const head = id.slice(0, PREFIX.length + NONCE_HEX) + this.tag(replicaUrl);
    return head.slice(PREFIX.length + NONCE_HEX) + this.mac(head, keyName);
  }

  /**
   * The replica holding `id` for `keyName`. An id this gateway did not mint, or another key's, is 404
   * `response_not_found` (the same answer, so a key does not learn which ids exist); an id whose replica is no
   * longer known is 404 `response_replica_gone`; a known replica that is not ready now, 503.
   */
  locate(id: string, keyName: string, registry: ModelRegistry, param: string, retryAfterSeconds: number): ResponseHome {
    if (!ID_PATTERN.test(id)) throw errors.responseNotFound(id, param);
    const head = id.slice(0, id.length - MAC_HEX);
    const expected = Buffer.from(this.mac(head, keyName));
    const given = Buffer.from(id.slice(id.length - MAC_HEX));
    if (!timingSafeEqual(expected, given)) throw errors.responseNotFound(id, param);
    const tag = head.slice(head.length - TAG_HEX);
    let unready: ResponseHome | undefined;
    for (const pool of registry.all()) {
      for (const replica of pool.replicas) {
        if (this.tag(replica.url) !== tag) continue;
        if (replica.ready) return { pool, replica };
        unready ??= { pool, replica };
      }
    }
    if (unready) throw errors.responseReplicaUnavailable(id, retryAfterSeconds);
    throw errors.responseReplicaGone(id, param);
  }

  private tag(url: string): string {
    let tag = this.tags.get(url);
    if (tag === undefined) {
      if (this.tags.size >= TAG_CACHE_MAX) this.tags.clear();
      tag = createHmac("sha256", this.secret).update(`replica\0${url}`).digest("hex").slice(0, TAG_HEX);
      this.tags.set(url, tag);
    }
    return tag;
  }

  private mac(head: string, keyName: string): string {
    return createHmac("sha256", this.secret).update(`owner\0${head}\0${keyName}`).digest("hex").slice(0, MAC_HEX);
  }
}

/** Length of every id the gateway mints. */
export const RESPONSE_ID_LENGTH = PREFIX.length + NONCE_HEX + STAMP_HEX;
export const RESPONSE_STAMP_LENGTH = STAMP_HEX;
