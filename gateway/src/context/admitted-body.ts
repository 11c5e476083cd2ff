/** A top-level member of a JSON body, located by http/body/json-members.ts's scan. */
export interface JsonMember {
  /** The key as JSON text, quotes and escapes included (decoded only when asked). */
  rawKey: string;
  /** Byte range of `"key": value`, without the separating comma. */
  start: number;
  end: number;
}

/** The memory a body holds (a lease of limits/keyed-budget.ts): resized to the bytes kept, released once they are let go. */
export interface BodyLease {
  resize(bytes: number): void;
  /** Its request waits for a replica: the bytes count in the waiting bodies' budget instead (false: no room there). */
  park(): boolean;
  /** It waits no more: the bytes count in the main budget again, if there is room there (else they stay parked). */
  unpark(): void;
  release(): void;
}

/** A request body that passed admission: decoded JSON bytes, the parsed value and the memory it holds. */
export interface AdmittedBody {
  /** The JSON text as sent (content coding and BOM removed). */
  bytes: Buffer;
  json: unknown;
  /** Top-level members of `bytes`, for forwarding them unchanged. */
  members: JsonMember[];
  lease: BodyLease;
}
