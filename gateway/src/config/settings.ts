import { z } from "zod";

/** Runtime settings of the gateway process, read from the environment (12-factor; a ConfigMap in the cluster). */
export const GatewaySettingsSchema = z.strictObject({
  host: z.string().min(1).default("0.0.0.0"),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Path of the model catalog (YAML or JSON, see catalog.ts). */
  catalogFile: z.string().min(1).optional(),
  /** A single API key given in plaintext (the embedded default); hashed at load, never kept or logged. */
  apiKey: z.string().min(16, "GATEWAY_API_KEY must be at least 16 characters").optional(),
  /** Path of the API-key file holding SHA-256 hashes (see api-keys.ts). */
  keysFile: z.string().min(1).optional(),
  /** Re-read the keys file this often; a mounted Secret changes in place, so keys rotate without a restart. */
  keysReloadIntervalMs: z.coerce.number().int().positive().default(5000),
  /** Redis for rate-limit counters shared by all gateway replicas (redis://host:6379/0); unset = in process. */
  redisUrl: z.string().regex(/^rediss?:\/\//, "a redis:// or rediss:// URL").optional(),
  /** Prometheus metrics on their own port, so the public listener never exposes them. 0 = ephemeral. */
  metricsPort: z.coerce.number().int().min(0).max(65535).default(9090),
  bodyLimitBytes: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  healthIntervalMs: z.coerce.number().int().positive().default(5000),
  healthTimeoutMs: z.coerce.number().int().positive().default(2000),
  /** Consecutive failed checks before a ready replica is taken out. */
  unhealthyThreshold: z.coerce.number().int().positive().default(2),
  /** Time until the model server sends response headers (for non-streaming: the whole generation). */
  upstreamHeadersTimeoutMs: z.coerce.number().int().positive().default(600_000),
  /** Longest silence between two body chunks of an upstream response. */
  upstreamIdleTimeoutMs: z.coerce.number().int().positive().default(120_000),
  /** Streaming requests still waiting after this long get SSE headers and keep-alive comments (0 = never). */
  sseKeepAliveMs: z.coerce.number().int().nonnegative().default(10_000),
  /** How often each replica's /metrics is read for queue depth and KV-cache use (0 = never). */
  loadScrapeIntervalMs: z.coerce.number().int().nonnegative().default(1000),
  retryAfterSaturatedSeconds: z.coerce.number().positive().default(1),
  retryAfterNotReadySeconds: z.coerce.number().positive().default(5),
  /**
   * On SIGTERM, readiness fails at once but the listener keeps serving this long, so the Service's endpoints
   * stop sending traffic here before new connections are refused (Kubernetes removes endpoints asynchronously).
   */
  drainDelayMs: z.coerce.number().int().nonnegative().default(5000),
  /** Then in-flight requests and streams get this long to finish before connections are closed. */
  shutdownGraceMs: z.coerce.number().int().nonnegative().default(30_000),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type GatewaySettings = z.infer<typeof GatewaySettingsSchema>;
export type GatewaySettingsInput = z.input<typeof GatewaySettingsSchema>;

/** Environment variable -> setting. One table, so the README and the code cannot drift apart. */
export const SETTINGS_ENV: Record<keyof GatewaySettings, string> = {
  host: "GATEWAY_HOST",
  port: "PORT",
  catalogFile: "GATEWAY_CATALOG",
  apiKey: "GATEWAY_API_KEY",
  keysFile: "GATEWAY_KEYS_FILE",
  keysReloadIntervalMs: "GATEWAY_KEYS_RELOAD_MS",
  redisUrl: "GATEWAY_REDIS_URL",
  metricsPort: "GATEWAY_METRICS_PORT",
  bodyLimitBytes: "GATEWAY_BODY_LIMIT_BYTES",
  healthIntervalMs: "GATEWAY_HEALTH_INTERVAL_MS",
  healthTimeoutMs: "GATEWAY_HEALTH_TIMEOUT_MS",
  unhealthyThreshold: "GATEWAY_UNHEALTHY_THRESHOLD",
  upstreamHeadersTimeoutMs: "GATEWAY_UPSTREAM_HEADERS_TIMEOUT_MS",
  upstreamIdleTimeoutMs: "GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS",
  sseKeepAliveMs: "GATEWAY_SSE_KEEPALIVE_MS",
  loadScrapeIntervalMs: "GATEWAY_LOAD_SCRAPE_INTERVAL_MS",
  retryAfterSaturatedSeconds: "GATEWAY_RETRY_AFTER_SATURATED_SECONDS",
  retryAfterNotReadySeconds: "GATEWAY_RETRY_AFTER_NOT_READY_SECONDS",
  drainDelayMs: "GATEWAY_DRAIN_DELAY_MS",
  shutdownGraceMs: "GATEWAY_SHUTDOWN_GRACE_MS",
  logLevel: "LOG_LEVEL",
};

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: GatewaySettingsInput = {}): GatewaySettings {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(SETTINGS_ENV)) {
    const value = env[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const result = GatewaySettingsSchema.safeParse({ ...raw, ...overrides });
  if (!result.success) {
    const lines = result.error.issues.map((i) => {
      const key = i.path[0] as keyof GatewaySettings | undefined;
      return `${key ? SETTINGS_ENV[key] ?? String(key) : "settings"}: ${i.message}`;
    });
    throw new Error(`Invalid gateway settings:\n  ${lines.join("\n  ")}`);
  }
  return result.data;
}
