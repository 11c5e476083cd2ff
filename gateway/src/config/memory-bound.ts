import type { GatewaySettings } from "./settings";

const MiB = 1024 * 1024;

/**
 * V8's old-space cap in the image (gateway/Dockerfile sets NODE_OPTIONS to it). Without one V8 sizes its heap
 * from the machine's RAM, not the container's limit, and lets garbage accumulate far past what the gateway
 * holds. 256 MiB is several times the live heap at the limits' worst (about 50-70 MiB measured), with room for
 * the requests in flight (maxInFlightRequests, up to about 80 KiB each).
 */
export const IMAGE_HEAP_LIMIT_MIB = 256;

/**
 * V8's young-generation cap in the image, per semi-space. Node 24 sizes it from the machine's memory (64 MiB on
 * a large node, so 128 MiB of new space, twice the live heap, all of it resident after a burst of traffic);
 * Node 20 kept 16. At 8 the gateway's RSS after load fell from about 250 to 150 MiB on Node 24; it collects more
 * often, for about a fifth more time in all, in pauses a quarter as long (`npm run bench`, `npm run bench:tail`).
 */
export const IMAGE_SEMI_SPACE_MIB = 8;

/**
 * The Node flags the image runs the gateway with: gateway/Dockerfile's NODE_OPTIONS (a test holds them equal).
 * The benchmarks and the hostile-client suites start the gateway with the same, so they measure what runs.
 */
export const IMAGE_NODE_FLAGS: readonly string[] = [`--max-old-space-size=${IMAGE_HEAP_LIMIT_MIB}`, `--max-semi-space-size=${IMAGE_SEMI_SPACE_MIB}`];

/** The process warm, before any client holds anything: code, runtime, pools (measured 126-129 MiB at peak). */
export const PROCESS_BASE_BYTES = 128 * MiB;
/** One open client connection: socket, parser and HTTP state (measured about 11 KiB). */
export const BYTES_PER_CONNECTION = 12 * 1024;
/**
 * One inference request in progress: a stream's buffers, parser and relay state, or a passed-through answer's
 * chunks between the model server's connection and the client's (measured 52-64 KiB per stream, `npm run
 * bench:hostile`; 80 KiB leaves room).
 */
export const BYTES_PER_REQUEST = 80 * 1024;
/**
 * Parsing the body being admitted: with at most maxJsonContainers objects and arrays, JSON's parsed form is at
 * most about 6x its text (boxed decimals); parsing is synchronous, so one body at a time. A held answer (at most
 * 1 MiB) is parsed the same way, within this.
 */
export const PARSE_AMPLIFICATION = 8;
/**
 * One connection reading and dropping an unread body (http/lingering-close.ts): the chunk in hand, at most the 64 KiB
 * a socket read delivers, dropped at once.
 */
export const BYTES_PER_LINGERING = 64 * 1024;
/** V8 collects lazily: garbage between collections (measured up to about 60 MiB over the live set). */
export const COLLECTION_SLACK_BYTES = 64 * MiB;

export type MemoryBoundSettings = Pick<GatewaySettings, "maxConnections" | "bodyMemoryBytes" | "waitingBodyMemoryBytes" | "bodyLimitBytes" | "answerMemoryBytes" | "maxInFlightRequests" | "maxLingeringConnections">;

/** The bound's terms, in bytes, in the order docs/gateway-api.md lists them. */
export function memoryBoundTerms(s: MemoryBoundSettings): Record<MemoryBoundTerm, number> {
  return {
    process: PROCESS_BASE_BYTES,
    connections: s.maxConnections * BYTES_PER_CONNECTION,
    requestBodies: s.bodyMemoryBytes,
    waitingBodies: s.waitingBodyMemoryBytes,
    answers: s.answerMemoryBytes,
    requestsInProgress: s.maxInFlightRequests * BYTES_PER_REQUEST,
    parsing: PARSE_AMPLIFICATION * s.bodyLimitBytes,
    lingering: s.maxLingeringConnections * BYTES_PER_LINGERING,
    collectionSlack: COLLECTION_SLACK_BYTES,
  };
}

/** What each term is and why it is bounded: the table in docs/gateway-api.md ("Memory bound") is built from it. */
export const MEMORY_BOUND_TERMS = {
  process: { label: "The process, warm", why: "code, runtime, pools; measured 126-129 MiB at peak" },
  connections: { label: "Connections × 12 KiB", why: "at most `maxConnections`; measured about 11 KiB each" },
  requestBodies: {
    label: "Request bodies",
    why: "`bodyMemoryBytes`, each body held once, as bytes, until it is sent; the parsed form is dropped before the request waits for anything",
  },
  waitingBodies: {
    label: "Bodies of waiting requests",
    why: "`waitingBodyMemoryBytes`: a request waiting for a replica keeps its body here instead",
  },
  answers: {
    label: "Held answers",
    why: "`answerMemoryBytes`",
  },
  requestsInProgress: {
    label: "Requests in progress × 80 KiB",
    why: "at most `maxInFlightRequests`: a stream's buffers and state, or the chunks of a passed-through answer on their way; measured 52-64 KiB per stream",
  },
  parsing: {
    label: "One body being parsed × 8",
    why: "parsing is synchronous (one at a time); with at most `maxJsonContainers` objects and arrays a parsed body is at most about 6× its text (a held answer, at most 1 MiB, likewise)",
  },
  lingering: {
    label: "Lingering connections × 64 KiB",
    why: "at most `maxLingeringConnections` read and drop an unread body at once, a socket read (up to 64 KiB) at a time, never held",
  },
  collectionSlack: { label: "Collection slack", why: "V8 collects lazily; measured up to about 60 MiB above the live set" },
} as const;

export type MemoryBoundTerm = keyof typeof MEMORY_BOUND_TERMS;

/**
 * The resident memory the gateway stays under however clients behave, for the given limits: the process, every
 * connection it may hold, every request-body and answer byte it may hold (once: the parsed form is dropped
 * before a request waits for anything; answers over 1 MiB are never held), every request in flight, one body
 * being parsed, and collection slack. docs/gateway-api.md states it for the defaults; `npm run bench:hostile`
 * measures against it.
 */
export function rssBoundBytes(s: MemoryBoundSettings): number {
  return Object.values(memoryBoundTerms(s)).reduce((a, b) => a + b, 0);
}
