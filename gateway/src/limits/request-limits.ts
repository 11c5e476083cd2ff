import type { ApiKeyRecord } from "../context/api-key-record";
import type { RequestContext } from "../context/request-context";
import type { Usage } from "../context/limit-ticket";
import type { KeyBudgets } from "./key-budgets";
import { tokensToReserve, type RateLimiter } from "./rate-limiter";

/** Where a request's x-ratelimit-* headers go (the response, until its headers are sent). */
export interface HeaderSink {
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
}

/**
 * The three points where a request meets its key's limits, each one call from the request path:
 * `admitKeyLimits` before the body is read (a request and a slot), `reserveKeyTokens` once the body is parsed
 * (the tokens it may use), `settleKeyLimits` when the usage is known (the difference refunded or charged).
 * The ticket is held by the request's context: released when the response closes, however it ends, or at once
 * if the client left while the store answered.
 */

/**
 * Takes a request and a slot of the key, or throws the 429 (503 when failing closed) envelope; with `budgets`
 * (inference requests), a request of its day or month budget too.
 */
export async function admitKeyLimits(limiter: RateLimiter, key: ApiKeyRecord, res: HeaderSink, ctx: RequestContext, budgets?: KeyBudgets): Promise<void> {
  if (budgets && key.budget) {
    const hold = await budgets.admit(key);
    if (hold) ctx.budgetHold = ctx.hold(hold, "while its key's budget was consulted");
  }
  const ticket = await limiter.admit(key);
  if (!ticket) return;
  ctx.limitTicket = ctx.hold(ticket, "while its key's limits were consulted");
  for (const [k, v] of Object.entries(ticket.headers)) res.setHeader(k, v);
}

/** Reserves the tokens the parsed request may use (prompt estimate plus its completion bound), or throws 429. */
export async function reserveKeyTokens(limiter: RateLimiter, res: HeaderSink, ctx: RequestContext, json: unknown, bodyBytes: number, path: string): Promise<void> {
  const ticket = ctx.limitTicket;
  const hold = ctx.budgetHold;
  if (!ticket && !hold) return;
  const tokens = tokensToReserve(json, bodyBytes, path, limiter.reserveCeiling);
  if (ticket) {
    try {
      await ticket.reserve(tokens);
    } finally {
      if (!res.headersSent) for (const [k, v] of Object.entries(ticket.headers)) res.setHeader(k, v);
    }
  }
  if (hold) await hold.reserveTokens(tokens);
  ctx.stillWanted("while its tokens were reserved");
}

/** The usage is known (undefined when the model server reported none): both reservations are settled. Never throws. */
export async function settleKeyLimits(limiter: RateLimiter, ctx: RequestContext, res: { statusCode: number; headersSent: boolean }, usage: Usage | undefined): Promise<void> {
  await limiter.settle(ctx.limitTicket, res, usage);
  if (ctx.budgetHold) await ctx.budgetHold.settle(usage, res.statusCode === 200 && res.headersSent);
}
