import cors from "cors";
import type { RequestHandler } from "express";

/** Response headers a browser client may read: what the OpenAI SDKs look at to retry and to report. */
const EXPOSED = [
  "x-request-id",
  "retry-after",
  "retry-after-ms",
  "x-should-retry",
  "x-ratelimit-limit-requests",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-reset-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-tokens",
];

/**
 * CORS for browser clients, in front of authentication: a preflight carries no key, so it is answered here (204)
 * for an allowed origin. CORS is the browser's policy, not access control: a request from another origin is still
 * authenticated and served, it only gets no CORS headers, so the browser hides the answer from the page.
 * Off (undefined) without origins: no headers at all, as a same-origin API.
 */
export function corsPolicy(origins: readonly string[], maxAgeSeconds: number): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  const allowed = new Set(origins);
  return cors({
    origin: allowed.has("*") ? "*" : (origin, done) => done(null, origin !== undefined && allowed.has(origin)),
    methods: ["GET", "POST", "DELETE", "OPTIONS"],
    // Request headers are reflected from the preflight (the SDKs send their own x-stainless-* headers).
    exposedHeaders: EXPOSED,
    credentials: false,
    maxAge: maxAgeSeconds,
    optionsSuccessStatus: 204,
  });
}
