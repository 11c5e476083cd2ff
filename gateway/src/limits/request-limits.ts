import type { Response } from "express";
import type { ApiKeyRecord } from "../context/api-key-record";
import type { LimitTicket } from "../context/limit-ticket";
import type { RequestContext } from "../context/request-context";
import { tokensToReserve, type RateLimiter } from "./rate-limiter";

/**
 * The three points where a request meets its key's limits, each one call from the request path:
 * `admitKeyLimits` before the body is read (a request and a slot), `reserveKeyTokens` once the body is parsed
 * (the tokens it may use), `RateLimiter.settle` when the usage is known (the difference refunded or charged).
 * The slot is released when the response closes, however it ends (complete, client gone, upstream error).
 */

/** Takes a request and a slot of the key, or throws the 429 (503 when failing closed) envelope. */
export async function admitKeyLimits(limiter: RateLimiter, key: ApiKeyRecord, res: Response, ctx: RequestContext): Promise<void> {
  const held: { closed: boolean; ticket?: LimitTicket } = { closed: false };
  res.once("close", () => {
    held.closed = true;
    held.ticket?.end();
  });
  const ticket = (held.ticket = await limiter.admit(key));
  if (!ticket) return;
  // The client may have left while the limits were consulted: nothing else would give the slot back.
  if (held.closed) ticket.end();
  ctx.limitTicket = ticket;
  for (const [k, v] of Object.entries(ticket.headers)) res.setHeader(k, v);
}

/** Reserves the tokens the parsed request may use (prompt estimate plus its completion bound), or throws 429. */
export async function reserveKeyTokens(limiter: RateLimiter, res: Response, ctx: RequestContext, json: unknown, bodyBytes: number, path: string): Promise<void> {
  const ticket = ctx.limitTicket;
  if (!ticket) return;
  try {
    await ticket.reserve(tokensToReserve(json, bodyBytes, path, limiter.reserveCeiling));
  } finally {
    if (!res.headersSent) for (const [k, v] of Object.entries(ticket.headers)) res.setHeader(k, v);
  }
}
