import { TextDecoder } from "node:util";
import type { NextFunction, Request, Response } from "express";
import { errors } from "../api/errors";
import type { GatewaySettings } from "../config/settings";
import type { AdmittedBody } from "../context/admitted-body";
import { contextOf, type RequestContext } from "../context/request-context";
import type { ApiKeyRecord } from "../context/api-key-record";
import type { BudgetLease, KeyedBudget } from "../limits/keyed-budget";
import type { KeyBudgets } from "../limits/key-budgets";
import type { RateLimiter } from "../limits/rate-limiter";
import { admitKeyLimits, reserveKeyTokens, type HeaderSink } from "../limits/request-limits";
import { checkCharset, checkContentEncoding, decodeContent, isEncoded } from "./body/content-coding";
import { scanJson } from "./body/json-members";
import { declaredLength, readBody } from "./body/read-body";

export type AdmissionLimits = Pick<GatewaySettings, "bodyLimitBytes" | "bodyIdleTimeoutMs" | "bodyTimeoutMs" | "maxJsonDepth" | "maxJsonContainers">;

export interface AdmissionEvents {
  refused(reason: "key_memory" | "gateway_memory" | "key_in_flight" | "gateway_in_flight"): void;
}

/** Taken once: the handler keeps what it needs and the parsed body becomes garbage as soon as it is done. */
export function takeAdmittedBody(ctx: RequestContext): AdmittedBody {
  const body = ctx.admittedBody;
  if (!body) throw new Error("no admitted body: the route lacks admitRequest()");
  ctx.admittedBody = undefined;
  return body;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What admission takes from: the key's limits, body memory, and requests in progress (each a budget per key). */
export interface AdmissionBudgets {
  limiter: RateLimiter;
  /** Day and month budgets per key (absent: none are enforced). */
  keyBudgets?: KeyBudgets;
  budget: KeyedBudget;
  inFlight: KeyedBudget;
  events: AdmissionEvents;
}

/**
 * What a request takes before a byte of its body is read, in order, each held by its context (given back once when
 * the response closes, or at once if the client left meanwhile): a slot among the requests in progress (the key's
 * share: 429; the gateway's: 503), a request of the key's day or month budget, the key's RPM, TPM and requests in progress across replicas (429), then memory for
 * `bodyBytes` from the key's share and the gateway's (429 / 503). Returns the body's memory lease.
 */
export async function admitBeforeBody(b: AdmissionBudgets, ctx: RequestContext, key: ApiKeyRecord, res: HeaderSink, bodyBytes: number): Promise<BudgetLease> {
  const slot = b.inFlight.reserve(key.name, 1);
  if (slot === "key") {
    b.events.refused("key_in_flight");
    throw errors.tooManyInFlight(key.name, b.inFlight.perKey);
  }
  if (slot === "gateway") {
    b.events.refused("gateway_in_flight");
    throw errors.gatewayOverloaded("requests in progress");
  }
  ctx.hold(slot, "before its request was admitted");

  await admitKeyLimits(b.limiter, key, res, ctx, b.keyBudgets);
  ctx.charged = true;

  const reserved = b.budget.reserve(key.name, bodyBytes);
  if (reserved === "key") {
    b.events.refused("key_memory");
    throw errors.inflightBytesExceeded(key.name, b.budget.perKey);
  }
  if (reserved === "gateway") {
    b.events.refused("gateway_memory");
    throw errors.gatewayOverloaded();
  }
  return ctx.hold(reserved, "before its request body was read");
}

/**
 * Admission of an inference request, after authentication and before the body: what is refused here costs
 * the gateway no body bytes. In order: a declared length over the limit (413) and a coding or charset it cannot
 * read (415), then what admitBeforeBody() takes. Only then is the body read, bounded in size and time, decoded,
 * and parsed as JSON within the depth and container limits; then the tokens it may use are reserved from the
 * key's TPM (429).
 */
export function admitRequest(limits: AdmissionLimits, budgets: AdmissionBudgets) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    const key = ctx.key!;
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limits.bodyLimitBytes) throw errors.bodyTooLarge(limits.bodyLimitBytes);
    const unreadable = checkContentEncoding(req.headers["content-encoding"]) ?? checkCharset(req.headers["content-type"]);
    if (unreadable) throw unreadable;
    // A compressed body may inflate up to the limit whatever its declared length.
    const encoded = isEncoded(req.headers["content-encoding"]);
    const reserved = await admitBeforeBody(budgets, ctx, key, res, encoded || declared === undefined ? limits.bodyLimitBytes : declared);

    // A slow upload may be preempted to make room for a key holding less (see limits/keyed-budget.ts).
    const preempted = new AbortController();
    reserved.uploading(() => preempted.abort(errors.uploadPreempted()));
    let sent: Buffer;
    try {
      sent = await readBody(req, res, { limitBytes: limits.bodyLimitBytes, idleTimeoutMs: limits.bodyIdleTimeoutMs, totalTimeoutMs: limits.bodyTimeoutMs }, preempted.signal);
    } finally {
      reserved.uploaded();
    }
    let bytes = decodeContent(sent, req.headers["content-encoding"], limits.bodyLimitBytes);
    if (bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3);
    reserved.resize(bytes.length);

    const scan = scanJson(bytes, { maxDepth: limits.maxJsonDepth, maxContainers: limits.maxJsonContainers });
    if (!scan.ok) throw scan.exceeded === "depth" ? errors.jsonTooDeep(limits.maxJsonDepth) : errors.jsonTooComplex(limits.maxJsonContainers);
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      throw errors.malformedJson("the body is not valid UTF-8");
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw errors.malformedJson(bytes.length === 0 ? "the body is empty" : "");
    }
    await reserveKeyTokens(budgets.limiter, res, ctx, json, bytes.length, req.path);
    ctx.admittedBody = { bytes, json, members: scan.members, lease: reserved };
    next();
  };
}
