/**
 * Rendezvous (highest-random-weight) hashing: every replica gets a pseudo-random weight for a key, and the key's
 * order of replicas is by weight. It depends only on the key and the replicas' addresses, so every gateway pod that
 * sees the same replicas computes the same order without talking to the others. A replica leaving takes only the keys
 * it came first for (each moves to its own next replica); a replica joining takes only the keys it now wins, about
 * 1/n of them. Thaler & Ravishankar, 1998; the same property Maglev and Envoy's ring hash aim for, with no ring.
 */

/** murmur3's 32-bit finalizer: every input bit flips each output bit with probability ~1/2. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A replica's identity for placement: FNV-1a of its address, the same in every gateway pod. */
export function placementKey(url: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < url.length; i++) {
    h ^= url.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** The weight of one replica for one key, in [0, 1): the key's home is the replica with the highest. */
export function rendezvousWeight(key: number, replicaKey: number): number {
  return fmix32(Math.imul(fmix32(key) ^ replicaKey, 0x9e3779b1) ^ (replicaKey >>> 7)) / 4294967296;
}
