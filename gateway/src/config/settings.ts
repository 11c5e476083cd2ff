import { z } from "zod";

/** How often each replica's /health is checked by default, ms; model servers' preStop delay counts on it. */
export const DEFAULT_HEALTH_INTERVAL_MS = 5000;

/**
 * How a limit documents itself: what it bounds and what a client sees when it trips, the columns of
 * docs/gateway-api.md's "Limits" table (`npm run docs:gateway`), and why the default is what it is, for whoever
 * changes it (kept here, with the code it argues for).
 */
export interface LimitDoc {
  description: string;
  why: string;
  clientSees: string;
}

const MiB = 1024 * 1024;
/** Non-streaming answers up to this size are held whole; larger ones pass through (relay/json.ts). */
export const HELD_ANSWER_MAX_BYTES = MiB;
const count = () => z.coerce.number().int().positive();
const ms = () => z.coerce.number().int().positive();
const limit = <T extends z.ZodType>(schema: T, doc: LimitDoc): T => schema.meta({ ...doc });

/**
 * Transport and admission limits: every resource a client can make the gateway hold (sockets, memory, time) has
 * one, and each default is argued in its `why`. Timeouts bound what the client sends, never a generation.
 */
const LimitsSchema = {
  maxConnections: limit(count().default(8192), {
    description: "Open client connections, all addresses together (at most 3/4 of the open-file limit).",
    why: "About 11 KiB each (measured, `npm run bench:hostile`): 8,192 cost under 100 MiB of the memory bound. At the cap the oldest idle connection makes room, so idle floods never lock clients out. Clamped to 3/4 of the open-file limit (the rest is for model-server connections).",
    clientSees: "An idle keep-alive connection is closed (clients reconnect); if none is idle, the new connection is.",
  }),
  maxConnectionsPerAddress: limit(z.coerce.number().int().nonnegative().default(0), {
    description: "Open connections from one client address (IPv6: one /64); 0: no cap. Leave it off behind a proxy; set it (1,024) when clients connect directly.",
    why: "Off because clients arrive through a proxy's few addresses: the cap would limit proxy pods, not clients. Limit clients at the proxy; a gateway exposed directly should set it (1,024, an eighth of maxConnections).",
    clientSees: "The address's oldest idle connection is closed; if none is idle, the new connection is (no HTTP answer).",
  }),
  maxHeaderBytes: limit(count().default(16 * 1024), {
    description: "Request line plus headers (the OpenAI SDKs send under 2 KiB).",
    why: "Node's default; the OpenAI SDKs send under 2 KiB. Large enough for long bearer tokens and tracing headers.",
    clientSees: "431 `request_header_fields_too_large`, connection closed.",
  }),
  headersTimeoutMs: limit(ms().default(10_000), {
    description: "From connection (or the previous request) until the request headers are complete.",
    why: "Clients send headers in one packet; 10 s is HAProxy's recommended `timeout http-request` and ends slowloris connections early. Also bounds how long a connection that never sends anything is held.",
    clientSees: "408 `request_timeout`, connection closed.",
  }),
  bodyLimitBytes: limit(count().default(4 * MiB), {
    description: "Request body size, after decompression. A 128k-token prompt is about 0.5 MiB; base64 images may need more.",
    why: "A 128k-token prompt is about 0.5 MiB of JSON; 4 MiB leaves 8x room and equals vLLM's simulator default. Multimodal payloads (base64 images) may need more: memory use grows with it (see `bodyMemoryBytes`).",
    clientSees: "413 `request_too_large`; for a declared length, before the client sends the body.",
  }),
  bodyIdleTimeoutMs: limit(ms().default(20_000), {
    description: "Longest pause between two chunks of a request body.",
    why: "Apache's mod_reqtimeout default for bodies (20 s): longer than TCP retransmission stalls on a lossy link, short enough that a stalled upload releases its memory soon.",
    clientSees: "408 `request_timeout`, connection closed.",
  }),
  bodyTimeoutMs: limit(ms().default(60_000), {
    description: "Whole request body, from the first byte the gateway reads to the last.",
    why: "A 4 MiB body at 1 Mbit/s takes 34 s; a client trickling bytes just inside the idle timeout is cut off after a minute.",
    clientSees: "408 `request_timeout`, connection closed.",
  }),
  requestTimeoutMs: limit(ms().default(90_000), {
    description: "Whole request (headers and body), a backstop over the timeouts above; never the response. Must exceed headersTimeoutMs.",
    why: "Headers (10 s) plus body (60 s) plus margin, so it only fires when the finer timeouts could not. Never applies to the response.",
    clientSees: "408 `request_timeout`, connection closed.",
  }),
  keepAliveTimeoutMs: limit(ms().default(65_000), {
    description: "Idle keep-alive connection between requests: longer than load balancers' usual 60 s, so they close first.",
    why: "Longer than the 60 s idle timeout of common load balancers (AWS ALB), so the balancer closes first and never sends into a connection the gateway just closed. Idle connections yield at the connection caps anyway.",
    clientSees: "The idle connection is closed; clients open a new one.",
  }),
  lingerTimeMs: limit(ms().default(5_000), {
    description: "After an answer given before the body was read (401, 413, 429, …), how long the gateway reads and drops what the client still sends, so that it reads the answer.",
    why: "nginx lingers up to 5 s between reads (`lingering_timeout`), 30 s in all (`lingering_time`); one total of 5 s is shorter still: a client on 10 Mbit/s sends 6 MB in it, and whatever the client does, its slot among maxLingeringConnections is back within 5 s.",
    clientSees: "The answer with `connection: close`, then the close; a client still sending gets a reset.",
  }),
  lingerBytes: limit(count().default(16 * MiB), {
    description: "The most read and dropped after such an answer. At least bodyLimitBytes.",
    why: "Four times the body limit: a client over the limit (the 413 case) finishes its body and reads the answer; a client sending without end is cut off after 16 MiB instead of lingerTimeMs.",
    clientSees: "Beyond it, a reset.",
  }),
  maxLingeringConnections: limit(count().default(64), {
    description: "Connections reading and dropping after such an answer at once.",
    why: "Each holds one of maxConnections and at most one chunk in memory (64 KiB in the memory bound); 64 cover a burst of refused uploads, and a flood of them cannot hold more while the rest are closed at once.",
    clientSees: "The connection closes right after the answer: a client still sending may get a reset.",
  }),
  maxJsonDepth: limit(z.coerce.number().int().min(8).max(1000).default(128), {
    description: "Nesting depth of a JSON request body (objects and arrays); at most 1,000.",
    why: "OpenAI allows 10 schema levels in tools and response_format, about 25 levels of JSON: 5x room, 30x below where serializing overflowed the stack (about 4,000).",
    clientSees: "400 `json_too_deep`.",
  }),
  maxJsonContainers: limit(count().default(100_000), {
    description: "Objects and arrays in one JSON request body, all levels together (real requests hold a few thousand).",
    why: "Parsed, each costs about 40 bytes (4 MiB of `{}` would be 56 MiB of heap). Real requests hold a few thousand (a long conversation, 128 tools, 2,048 token arrays): 15x room, and a parsed body stays under about 6x its size.",
    clientSees: "400 `json_too_complex`.",
  }),
  bodyMemoryBytes: limit(count().default(48 * MiB), {
    description: "Request bodies held in memory by the whole gateway, reserved before the body is read until it is sent upstream. When full, an upload still arriving from the key holding the most yields to a key holding less.",
    why: "Twelve maximum-size bodies, or thousands of ordinary ones, arriving or on their way at once; with the other terms it keeps the gateway under its memory bound, inside the 512 MiB container.",
    clientSees: "503 `gateway_overloaded` (a preempted upload: while it arrives, connection closed).",
  }),
  waitingBodyMemoryBytes: limit(count().default(16 * MiB), {
    description: "Bodies of requests waiting for a replica (a busy model's queue, or a model waking), the whole gateway: moved here from bodyMemoryBytes, so waiting requests never take memory from requests that can go.",
    why: "Thousands of ordinary prompts, or four maximum-size ones, waiting at once; waiting is bounded in count per model too (maxQueueLength, wake.maxHeld). Taken from what bodyMemoryBytes had, so the memory bound is unchanged.",
    clientSees: "429 `model_saturated` when a request would wait.",
  }),
  bodyMemoryPerKeyBytes: limit(count().default(16 * MiB), {
    description: "Request bodies held for one API key, arriving, on their way or waiting. At least bodyLimitBytes.",
    why: "Four maximum-size bodies, or hundreds of ordinary ones, arriving or waiting for a slot at once; a key that stalls uploads can hold only a third of the gateway's body memory, so other keys keep being served.",
    clientSees: "429 `inflight_bytes_exceeded`.",
  }),
  maxInFlightRequests: limit(count().default(1024), {
    description: "Inference requests in progress in the whole gateway, streams included; scale gateway replicas for more.",
    why: "Each costs memory while it lasts (52-64 KiB per stream measured, 80 KiB in the memory bound): uncapped, thousands of slow streams would exhaust the heap. 1,024 is four vLLM replicas' default concurrency; scale gateway replicas for more.",
    clientSees: "503 `gateway_overloaded`.",
  }),
  maxInFlightRequestsPerKey: limit(count().default(256), {
    description: "Inference requests in progress for one API key; raise it for batch keys.",
    why: "A quarter of the gateway's: one key holding thousands of slow streams (or stalled clients) cannot take every slot from the others. 256 is one vLLM replica's default concurrency; raise it for batch keys.",
    clientSees: "429 `concurrency_limit_exceeded`.",
  }),
  clientStallTimeoutMs: limit(ms().default(120_000), {
    description: "Longest a stream waits for a client that stops reading.",
    why: "Same allowance as the model-server silence within a stream (upstreamIdleTimeoutMs): a live client reads within seconds, and a stalled one must not hold a model slot indefinitely.",
    clientSees: "The connection is closed, the upstream request cancelled.",
  }),
  answerStallTimeoutMs: limit(ms().default(20_000), {
    description: "Longest a non-streaming answer, or the end of any, waits while the client takes none of it.",
    why: "The answer holds memory or a model-server connection; a client that reads at all takes some within seconds. 20 s, like bodyIdleTimeoutMs, outlasts TCP retransmission stalls.",
    clientSees: "The connection is closed.",
  }),
  answerMemoryBytes: limit(count().default(32 * MiB), {
    description: "Non-streaming answers held by the whole gateway until their clients take them: those up to 1 MiB; larger ones pass through.",
    why: "Thousands of ordinary answers (a chat completion is a few KiB), or 32 of the largest held ones, waiting on clients that read slowly; a client that stops reading holds its part for at most answerStallTimeoutMs.",
    clientSees: "503 `gateway_overloaded` (the model's answer is dropped).",
  }),
  answerMemoryPerKeyBytes: limit(count().default(8 * MiB), {
    description: "Non-streaming answers held for one API key. At least 1 MiB.",
    why: "A key whose clients stop reading can hold only a quarter of the answer memory, so other keys' answers keep being delivered.",
    clientSees: "429 `inflight_bytes_exceeded` (the model's answer is dropped).",
  }),
  upstreamIdleTimeoutMs: limit(ms().default(120_000), {
    description: "Longest silence between two chunks of a model server's response, e.g. between tokens. A stream has no total time limit.",
    why: "Generous for the slowest token on a loaded replica and long prefills behind SSE keep-alives; no total timeout, which would cut long answers.",
    clientSees: "504 `upstream_timeout`; in a stream, its error event.",
  }),
  upstreamHeadersTimeoutMs: limit(ms().default(600_000), {
    description: "Until the model server sends response headers: for a non-streaming request the whole generation.",
    why: "The OpenAI SDKs' own default timeout (10 minutes); a streaming request gets its headers at once and is bounded by upstreamIdleTimeoutMs instead.",
    clientSees: "504 `upstream_timeout`.",
  }),
  logLinesPerSecond: limit(count().default(50), {
    description: "Log lines per second of requests no RPM charged (refusals, unknown paths, listings), for unauthenticated traffic and per key; the rest are counted and summarised each second.",
    why: "Uncharged traffic is unlimited, so its lines are sampled: 50 lines/s (about 15 KB/s) per budget diagnoses a flood and stays under the log store's 3 MB/s per-stream limit up to about 200 keys.",
    clientSees: "Nothing.",
  }),
};

/** Settings that bound a client's resources, in the order docs/gateway-api.md lists them. */
export const LIMIT_SETTINGS = Object.keys(LimitsSchema) as (keyof typeof LimitsSchema)[];

/** A limit's documentation, as registered with its schema. */
export function limitDoc(key: (typeof LIMIT_SETTINGS)[number]): LimitDoc {
  return LimitsSchema[key].meta() as unknown as LimitDoc;
}

/** `https://host[:port]` exactly as a browser sends it in `Origin` (lowercase host, no default port, no path). */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * An OTLP/HTTP endpoint without credentials in it: the URL is logged and, in the cluster, a plain environment
 * variable; credentials go in OTEL_EXPORTER_OTLP_HEADERS from a Secret.
 */
export const OtlpEndpointSchema = z
  .url({ protocol: /^https?$/, error: "an http:// or https:// URL" })
  .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), { error: "must not carry credentials (user:password@): put them in OTEL_EXPORTER_OTLP_HEADERS" });

/** One allowed browser origin (CORS), or `*` for any. */
export const CorsOriginSchema = z.string().refine((o) => o === "*" || isOrigin(o), { error: (i) => `"${String(i.input)}" is not an origin (scheme://host[:port], no path) or *` });

/** What a setting is, for docs/configuration.md's table of environment variables (`npm run docs:config`). */
const about = (description: string) => ({ description });

/** Runtime settings of the gateway process, read from the environment (12-factor; a ConfigMap in the cluster). */
const SettingsObject = z.strictObject({
  host: z.string().min(1).default("0.0.0.0").meta(about("Listen address of the API and operations ports.")),
  port: z.coerce.number().int().min(0).max(65535).default(8080).meta(about("The API port.")),
  catalogFile: z.string().min(1).optional().meta(about("Path of the model catalog, YAML or JSON: models, upstreams, routing, aliases.")),
  // Hashed at load, never kept or logged.
  apiKey: z
    .string()
    .min(16, "GATEWAY_API_KEY must be at least 16 characters")
    .optional()
    .meta(about("One plaintext API key (16+ characters), `default`, without models, expiry or limits (`npm start`).")),
  keysFile: z.string().min(1).optional().meta(about("Path of the keys file ([gateway-api.md](gateway-api.md#authentication)).")),
  // A mounted Secret changes in place, so keys rotate without a restart.
  keysReloadIntervalMs: z.coerce.number().int().positive().default(5000).meta(about("How often the keys file is read again, ms; an invalid file keeps the last good set.")),
  upstreamApiKey: z
    .string()
    .min(1)
    .optional()
    .meta(about("The key the model servers require (vLLM `VLLM_API_KEY`), sent upstream as a bearer token, never logged.")),
  responseIdSecret: z
    .string()
    .min(16, "GATEWAY_RESPONSE_ID_SECRET must be at least 16 characters")
    .optional()
    .meta(
      about(
        "Secret of the Responses API's ids, the same on every replica. Unset: shared through Redis if set, else random per process.",
      ),
    ),
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, "a redis:// or rediss:// URL")
    .optional()
    .meta(about("Redis (`redis://`, `rediss://`) holding the per-key limits of every replica; unset: each keeps its own.")),
  redisFailureMode: z
    .enum(["open", "closed"])
    .default("open")
    .meta(
      about(
        "When Redis fails: `open` goes on with per-replica limits, `closed` answers keys with limits 503 `rate_limit_store_unavailable`.",
      ),
    ),
  // Measured from the gateway's side, so a gateway starved of CPU adds its own event-loop lag.
  redisTimeoutMs: z.coerce
    .number()
    .int()
    .positive()
    .default(500)
    .meta(about("A Redis command unanswered this many ms counts as Redis down; keep room for a gateway short of CPU.")),
  keyMaxConcurrent: z.coerce.number().int().positive().optional().meta(about("Concurrent requests across replicas for keys without `maxConcurrent`; unset: no cap.")),
  tokenReserveCeiling: z.coerce
    .number()
    .int()
    .positive()
    .default(4096)
    .meta(about("Tokens reserved from a key's TPM for a request without `max_tokens`, settled afterwards.")),
  limitSlotLeaseMs: z.coerce
    .number()
    .int()
    .min(300)
    .default(30_000)
    .meta(about("Lifetime of a concurrency slot in Redis unless renewed: a crashed replica's slots free themselves within it, ms.")),
  rateLimitWindowMs: z.coerce.number().int().min(1000).default(60_000).meta(about("The \"minute\" of `rpm` and `tpm`, ms; for tests.")),
  metricsPort: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(9090)
    .meta(about("The operations port: `/metrics`, `/healthz`, `/readyz`. 0: a free port.")),
  healthIntervalMs: z.coerce.number().int().positive().default(DEFAULT_HEALTH_INTERVAL_MS).meta(about("How often each replica's `GET /health` is checked, ms.")),
  healthTimeoutMs: z.coerce.number().int().positive().default(2000).meta(about("How long a health check or `/metrics` read may take, ms.")),
  unhealthyThreshold: z.coerce.number().int().positive().default(2).meta(about("Failed health checks in a row that take a replica out (a refused connection or a 503: at once).")),
  sseKeepAliveMs: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(10_000)
    .meta(about("A stream without an answer this many ms gets its SSE headers and a `: keep-alive` comment every interval; 0: never.")),
  loadScrapeIntervalMs: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(1000)
    .meta(about("How often each replica's `/metrics` is read for its queue and KV-cache use, ms; 0: never.")),
  listWakeModels: z
    .stringbool()
    .default(false)
    .meta(about("`true`: `/v1/models` also lists models [at zero](gateway-api.md#models-at-zero) that wake on demand.")),
  retryAfterSaturatedSeconds: z.coerce.number().positive().default(1).meta(about("`retry-after` of a 429 `model_saturated` the gateway makes, seconds.")),
  retryAfterNotReadySeconds: z.coerce.number().positive().default(5).meta(about("`retry-after` of the gateway's own 503s, seconds.")),
  // Kubernetes removes endpoints asynchronously: the Service must stop sending traffic before new connections are refused.
  drainDelayMs: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(5000)
    .meta(about("On SIGTERM, readiness fails and the listener keeps serving this many ms.")),
  shutdownGraceMs: z.coerce.number().int().nonnegative().default(30_000).meta(about("Then requests and streams get this many ms to finish.")),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info").meta(about("`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.")),
  corsOrigins: z
    .string()
    .default("")
    .transform((list) => list.split(",").map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(CorsOriginSchema))
    .meta(
      about(
        "Browser origins allowed (CORS), comma-separated, or `*`.",
      ),
    ),
  // Unset: no tracing code on the request path.
  otlpTracesEndpoint: OtlpEndpointSchema.optional().meta(
    about("OTLP/HTTP traces endpoint; unset: no traces."),
  ),
  traceSampleRatio: z.coerce.number().min(0).max(1).default(1).meta(about("Share traced when the caller's `traceparent` decides nothing.")),
  tlsCertFile: z
    .string()
    .min(1)
    .optional()
    .meta(about("PEM certificate (leaf first) whose expiry is exported; re-read each minute.")),
  ledgerBucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "an S3 bucket name")
    .optional()
    .meta(about("Bucket of the [usage ledger](usage-ledger.md); credentials from the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`, web identity).")),
  ledgerEndpoint: z.url({ protocol: /^https?$/ }).optional().meta(about("S3-compatible endpoint of the ledger's bucket (MinIO, Ceph); unset: AWS S3.")),
  ledgerRegion: z.string().min(1).default("us-east-1").meta(about("Region the ledger's requests are signed for.")),
  ledgerPrefix: z
    .string()
    .regex(/^([A-Za-z0-9._-]+\/)*$/, "empty, or path segments each ending in /")
    .default("ledger/")
    .meta(about("Where in the bucket (or directory) the ledger's objects go; the gateway writes nothing outside it.")),
  ledgerDir: z.string().min(1).optional().meta(about("A directory for the ledger instead of a bucket (one replica, `npm start`).")),
  ledgerFlushMs: z.coerce
    .number()
    .int()
    .min(100)
    .default(10_000)
    .meta(about("How often counts are written to the ledger, ms: what a killed replica may lose at most.")),
  replicaName: z
    .string()
    .min(1)
    .optional()
    .meta(about("This replica's name in the ledger (a random part is added per process); unset: `HOSTNAME`, the pod's name.")),
  corsMaxAgeSeconds: z.coerce.number().int().nonnegative().max(86_400).default(600).meta(about("`Access-Control-Max-Age` of a preflight, seconds.")),
  ...LimitsSchema,
});

/** Limits that only make sense together are checked together, naming the setting to change. */
export const GatewaySettingsSchema = SettingsObject.superRefine((s, ctx) => {
  const issue = (path: keyof GatewaySettings, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (s.bodyMemoryPerKeyBytes < s.bodyLimitBytes) issue("bodyMemoryPerKeyBytes", `must be at least the body limit (${s.bodyLimitBytes})`);
  if (s.bodyMemoryBytes < s.bodyMemoryPerKeyBytes) issue("bodyMemoryBytes", `must be at least the per-key share (${s.bodyMemoryPerKeyBytes})`);
  if (s.waitingBodyMemoryBytes < s.bodyLimitBytes) issue("waitingBodyMemoryBytes", `must be at least the body limit (${s.bodyLimitBytes})`);
  if (s.answerMemoryPerKeyBytes < HELD_ANSWER_MAX_BYTES) issue("answerMemoryPerKeyBytes", `must be at least the largest held answer (${HELD_ANSWER_MAX_BYTES})`);
  if (s.maxInFlightRequests < s.maxInFlightRequestsPerKey) issue("maxInFlightRequests", `must be at least the per-key share (${s.maxInFlightRequestsPerKey})`);
  if (s.answerMemoryBytes < s.answerMemoryPerKeyBytes) issue("answerMemoryBytes", `must be at least the per-key share (${s.answerMemoryPerKeyBytes})`);
  if (s.maxConnectionsPerAddress > s.maxConnections) issue("maxConnectionsPerAddress", `must be at most maxConnections (${s.maxConnections})`);
  if (s.lingerBytes < s.bodyLimitBytes) issue("lingerBytes", `must be at least the body limit (${s.bodyLimitBytes})`);
  if (s.ledgerBucket && s.ledgerDir) issue("ledgerDir", "set either a bucket or a directory for the ledger, not both");
  if (s.requestTimeoutMs <= s.headersTimeoutMs) issue("requestTimeoutMs", `must exceed the headers timeout (${s.headersTimeoutMs})`);
});

export type GatewaySettings = z.infer<typeof SettingsObject>;
export type GatewaySettingsInput = z.input<typeof GatewaySettingsSchema>;

/** Environment variable -> setting. One table, so docs/configuration.md (generated from it) and the code cannot drift apart. */
export const SETTINGS_ENV: Record<keyof GatewaySettings, string> = {
  host: "GATEWAY_HOST",
  port: "PORT",
  catalogFile: "GATEWAY_CATALOG",
  apiKey: "GATEWAY_API_KEY",
  keysFile: "GATEWAY_KEYS_FILE",
  keysReloadIntervalMs: "GATEWAY_KEYS_RELOAD_MS",
  redisUrl: "GATEWAY_REDIS_URL",
  responseIdSecret: "GATEWAY_RESPONSE_ID_SECRET",
  redisFailureMode: "GATEWAY_REDIS_FAILURE_MODE",
  redisTimeoutMs: "GATEWAY_REDIS_TIMEOUT_MS",
  keyMaxConcurrent: "GATEWAY_KEY_MAX_CONCURRENT",
  tokenReserveCeiling: "GATEWAY_TOKEN_RESERVE_CEILING",
  limitSlotLeaseMs: "GATEWAY_LIMIT_SLOT_LEASE_MS",
  rateLimitWindowMs: "GATEWAY_RATE_LIMIT_WINDOW_MS",
  upstreamApiKey: "GATEWAY_UPSTREAM_API_KEY",
  metricsPort: "GATEWAY_METRICS_PORT",
  bodyLimitBytes: "GATEWAY_BODY_LIMIT_BYTES",
  healthIntervalMs: "GATEWAY_HEALTH_INTERVAL_MS",
  healthTimeoutMs: "GATEWAY_HEALTH_TIMEOUT_MS",
  unhealthyThreshold: "GATEWAY_UNHEALTHY_THRESHOLD",
  upstreamHeadersTimeoutMs: "GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS",
  upstreamIdleTimeoutMs: "GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS",
  maxInFlightRequests: "GATEWAY_MAX_IN_FLIGHT_REQUESTS",
  maxInFlightRequestsPerKey: "GATEWAY_MAX_IN_FLIGHT_REQUESTS_PER_KEY",
  answerStallTimeoutMs: "GATEWAY_ANSWER_STALL_TIMEOUT_MS",
  answerMemoryBytes: "GATEWAY_ANSWER_MEMORY_BYTES",
  answerMemoryPerKeyBytes: "GATEWAY_ANSWER_MEMORY_PER_KEY_BYTES",
  maxConnections: "GATEWAY_MAX_CONNECTIONS",
  maxConnectionsPerAddress: "GATEWAY_MAX_CONNECTIONS_PER_ADDRESS",
  maxHeaderBytes: "GATEWAY_MAX_HEADER_BYTES",
  headersTimeoutMs: "GATEWAY_HEADERS_TIMEOUT_MS",
  bodyIdleTimeoutMs: "GATEWAY_BODY_IDLE_TIMEOUT_MS",
  bodyTimeoutMs: "GATEWAY_BODY_TIMEOUT_MS",
  requestTimeoutMs: "GATEWAY_REQUEST_TIMEOUT_MS",
  keepAliveTimeoutMs: "GATEWAY_KEEPALIVE_TIMEOUT_MS",
  lingerTimeMs: "GATEWAY_LINGER_TIME_MS",
  lingerBytes: "GATEWAY_LINGER_BYTES",
  maxLingeringConnections: "GATEWAY_MAX_LINGERING_CONNECTIONS",
  maxJsonDepth: "GATEWAY_MAX_JSON_DEPTH",
  maxJsonContainers: "GATEWAY_MAX_JSON_CONTAINERS",
  bodyMemoryBytes: "GATEWAY_BODY_MEMORY_BYTES",
  bodyMemoryPerKeyBytes: "GATEWAY_BODY_MEMORY_PER_KEY_BYTES",
  waitingBodyMemoryBytes: "GATEWAY_WAITING_BODY_MEMORY_BYTES",
  clientStallTimeoutMs: "GATEWAY_CLIENT_STALL_TIMEOUT_MS",
  logLinesPerSecond: "GATEWAY_LOG_LINES_PER_SECOND",
  sseKeepAliveMs: "GATEWAY_SSE_KEEPALIVE_MS",
  loadScrapeIntervalMs: "GATEWAY_LOAD_SCRAPE_INTERVAL_MS",
  listWakeModels: "GATEWAY_LIST_WAKE_MODELS",
  retryAfterSaturatedSeconds: "GATEWAY_RETRY_AFTER_SATURATED_SECONDS",
  retryAfterNotReadySeconds: "GATEWAY_RETRY_AFTER_NOT_READY_SECONDS",
  drainDelayMs: "GATEWAY_DRAIN_DELAY_MS",
  shutdownGraceMs: "GATEWAY_SHUTDOWN_GRACE_MS",
  logLevel: "LOG_LEVEL",
  corsOrigins: "GATEWAY_CORS_ORIGINS",
  corsMaxAgeSeconds: "GATEWAY_CORS_MAX_AGE_SECONDS",
  otlpTracesEndpoint: "GATEWAY_OTLP_TRACES_ENDPOINT",
  traceSampleRatio: "GATEWAY_TRACE_SAMPLE_RATIO",
  tlsCertFile: "GATEWAY_TLS_CERT_FILE",
  ledgerBucket: "GATEWAY_LEDGER_BUCKET",
  ledgerEndpoint: "GATEWAY_LEDGER_S3_ENDPOINT",
  ledgerRegion: "GATEWAY_LEDGER_S3_REGION",
  ledgerPrefix: "GATEWAY_LEDGER_PREFIX",
  ledgerDir: "GATEWAY_LEDGER_DIR",
  ledgerFlushMs: "GATEWAY_LEDGER_FLUSH_MS",
  replicaName: "GATEWAY_REPLICA_NAME",
};

/** A setting the environment got wrong: the variable, and what is wrong with its value. */
export interface SettingsProblem {
  readonly variable: string;
  readonly message: string;
}

/** The settings an environment gives (an unset or empty variable takes the default), or why they are invalid. */
export function parseSettingsEnv(
  env: Readonly<Record<string, string | undefined>>,
  overrides: GatewaySettingsInput = {},
): { readonly settings: GatewaySettings; readonly problems?: undefined } | { readonly settings?: undefined; readonly problems: readonly SettingsProblem[] } {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(SETTINGS_ENV)) {
    const value = env[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const result = GatewaySettingsSchema.safeParse({ ...raw, ...overrides });
  if (result.success) return { settings: result.data };
  return {
    problems: result.error.issues.map((i) => {
      const key = i.path[0] as keyof GatewaySettings | undefined;
      return { variable: key ? (SETTINGS_ENV[key] ?? String(key)) : "settings", message: i.message };
    }),
  };
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: GatewaySettingsInput = {}): GatewaySettings {
  const { settings, problems } = parseSettingsEnv(env, overrides);
  if (problems) throw new Error(`Invalid gateway settings:\n  ${problems.map((p) => `${p.variable}: ${p.message}`).join("\n  ")}`);
  return settings;
}

/** The `Authorization` the gateway sends the model servers (their API key), or undefined to send none. */
export function upstreamAuthorization(settings: Pick<GatewaySettings, "upstreamApiKey">): string | undefined {
  return settings.upstreamApiKey ? `Bearer ${settings.upstreamApiKey}` : undefined;
}
