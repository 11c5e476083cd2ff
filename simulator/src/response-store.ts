import type { ChatMessage } from "./requests/chat-request";
import type { ResponseObject } from "./response-object";

/**
 * The replica's memory of finished responses, as vLLM keeps them (`response_store` and `msg_store`): the
 * response object for `GET /v1/responses/{id}`, and the input messages it was generated from, which a
 * follow-up with `previous_response_id` continues. vLLM's store grows without bound; this one is an LRU of
 * `capacity` entries so a long-running simulator stays small. Nothing is shared between replicas, which is
 * exactly what the gateway must route around.
 */

export interface StoredResponse {
  response: ResponseObject;
  /** The conversation the response answered (instructions, history, input), in chat form. */
  messages: ChatMessage[];
}

export class ResponseStore {
  private readonly entries = new Map<string, StoredResponse>();

  constructor(private readonly capacity: number) {}

  get enabled(): boolean {
    return this.capacity > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The stored response, now most recently used; undefined when unknown or evicted. */
  get(id: string): StoredResponse | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  put(id: string, entry: StoredResponse): void {
    if (!this.enabled) return;
    this.entries.delete(id);
    this.entries.set(id, entry);
    // Map iterates in insertion order, so the first key is the least recently used.
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
