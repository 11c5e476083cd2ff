import type { GatewaySettings } from "./settings";

const MiB = 1024 * 1024;

/**
 * V8's old-space cap in the image (gateway/Dockerfile sets NODE_OPTIONS to it). Without one V8 sizes its heap
 * from the machine's RAM, not the container's limit, and lets garbage accumulate far past what the gateway
 * holds. 256 MiB is several times the live heap at the limits' worst (about 50-70 MiB measured), with room for
 * a few thousand concurrent streams (about 40 KiB of heap each).
 */
export const IMAGE_HEAP_LIMIT_MIB = 256;

/** The process warm, before any client holds anything: code, runtime, pools (measured 126-129 MiB at peak). */
export const PROCESS_BASE_BYTES = 128 * MiB;
/** One open client connection: socket, parser and HTTP state (measured about 11 KiB). */
export const BYTES_PER_CONNECTION = 12 * 1024;
/**
 * Parsing the body being admitted: with at most maxJsonContainers objects and arrays, JSON's parsed form is at
 * most about 6x its text (boxed decimals); parsing is synchronous, so one body at a time.
 */
export const PARSE_AMPLIFICATION = 8;
/** V8 collects lazily: garbage between collections (measured up to about 60 MiB over the live set). */
export const COLLECTION_SLACK_BYTES = 64 * MiB;

/**
 * The resident memory the gateway stays under however clients behave, for the given limits: the process, every
 * connection it may hold, every body byte it may hold (once: the parsed form is dropped before a request waits
 * for anything), one body being parsed, and collection slack. Requests being answered (streams) add about
 * 40-80 KiB each on top; their number is bounded by the models' concurrency caps and queues, not by clients.
 * docs/gateway-api.md states it for the defaults; `npm run bench:hostile` measures against it.
 */
export function rssBoundBytes(s: Pick<GatewaySettings, "maxConnections" | "bodyMemoryBytes" | "bodyLimitBytes">): number {
  return PROCESS_BASE_BYTES + s.maxConnections * BYTES_PER_CONNECTION + s.bodyMemoryBytes + PARSE_AMPLIFICATION * s.bodyLimitBytes + COLLECTION_SLACK_BYTES;
}
