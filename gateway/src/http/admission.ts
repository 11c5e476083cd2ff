import { TextDecoder } from "node:util";
import type { NextFunction, Request, Response } from "express";
import { errors } from "../api/errors";
import type { GatewaySettings } from "../config/settings";
import type { AdmittedBody } from "../context/admitted-body";
import { contextOf, type RequestContext } from "../context/request-context";
import type { KeyedBudget, BudgetLease } from "../limits/keyed-budget";
import type { RateLimiter } from "../limits/rate-limiter";
import { admitKeyLimits, reserveKeyTokens } from "../limits/request-limits";
import { checkCharset, checkContentEncoding, decodeContent, isEncoded } from "./body/content-coding";
import { scanJson } from "./body/json-members";
import { declaredLength, readBody } from "./body/read-body";
import { ClientGone } from "./client-gone";

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

/**
 * Admission of an inference request, after authentication and before the body: what is refused here costs
 * the gateway no body bytes. In order: a declared length over the limit (413) and a coding or charset it cannot
 * read (415), a slot among the requests in progress (the key's share: 429; the gateway's: 503), the key's RPM,
 * TPM and requests in progress across replicas (429), then memory for the body from the key's share and the
 * gateway's (429 / 503). Only then is the body read, bounded in size and time,
 * decoded, and parsed as JSON within the depth and container limits; then the tokens it may use are reserved
 * from the key's TPM (429).
 */
export function admitRequest(limits: AdmissionLimits, limiter: RateLimiter, budget: KeyedBudget, inFlight: KeyedBudget, events: AdmissionEvents) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    const key = ctx.key!;
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limits.bodyLimitBytes) throw errors.bodyTooLarge(limits.bodyLimitBytes);
    const unreadable = checkContentEncoding(req.headers["content-encoding"]) ?? checkCharset(req.headers["content-type"]);
    if (unreadable) throw unreadable;

    // A slot among the requests in progress: the key's share, and the gateway's (counted in requests).
    const slot = inFlight.reserve(key.name, 1);
    if (slot === "key") {
      events.refused("key_in_flight");
      throw errors.tooManyInFlight(key.name, inFlight.perKey);
    }
    if (slot === "gateway") {
      events.refused("gateway_in_flight");
      throw errors.gatewayOverloaded("requests in progress");
    }
    // One listener gives back everything admission took, whenever the response ends.
    const taken: BudgetLease[] = [slot];
    let closed = false;
    res.once("close", () => {
      closed = true;
      for (const lease of taken) lease.release();
    });

    await admitKeyLimits(limiter, key, res, ctx);
    ctx.charged = true;

    // A compressed body may inflate up to the limit whatever its declared length.
    const encoded = isEncoded(req.headers["content-encoding"]);
    const reserved = budget.reserve(key.name, encoded || declared === undefined ? limits.bodyLimitBytes : declared);
    if (reserved === "key") {
      events.refused("key_memory");
      throw errors.inflightBytesExceeded(key.name, budget.perKey);
    }
    if (reserved === "gateway") {
      events.refused("gateway_memory");
      throw errors.gatewayOverloaded();
    }
    taken.push(reserved);
    // The client may have left while the rate limit was consulted: nothing would give the memory back then.
    if (closed) {
      reserved.release();
      throw new ClientGone("before its request body was read");
    }

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
    await reserveKeyTokens(limiter, res, ctx, json, bytes.length, req.path);
    ctx.admittedBody = { bytes, json, members: scan.members, lease: reserved };
    next();
  };
}
