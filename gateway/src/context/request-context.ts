import type { ServerResponse } from "node:http";
import type { Span } from "@opentelemetry/api";
import type { AdmittedBody } from "./admitted-body";
import type { ApiKeyRecord } from "./api-key-record";
import { ClientGone } from "./client-gone";
import type { BudgetTicket, LimitTicket } from "./limit-ticket";
import type { Releasable } from "./releasable";

/** Fields of the one log line written per request; each layer fills in what it learns. */
export interface RequestLogFields {
  /** As the client sent it: set through clientText(), bounded and escaped. */
  model?: string;
  /** The alias the client asked for, when `model` was reached through one. */
  alias?: string;
  stream?: boolean;
  replica?: string;
  attempts?: number;
  /** How long the request was held for its model to wake from zero, ms (absent when it was not held). */
  heldMs?: number;
  promptTokens?: number;
  completionTokens?: number;
  /** Prompt tokens the model server served from its prefix cache (absent when it reported none). */
  cachedTokens?: number;
  errorCode?: string | null;
  streamError?: string;
  /** The Responses API: the id of the response made (the gateway chose it), or the one a follow-up asked for. */
  responseId?: string;
  /** The client stopped reading and was disconnected after the stall timeout. */
  clientStalled?: boolean;
}

/**
 * Everything the request path learns about one request, in the order the layers learn it: transport (id, start),
 * auth (key), admission (whether the rate limit charged it, the body), validation (the model), relay and
 * accounting (the log fields). This module owns it: layers read and write it through `contextOf`, nothing else
 * travels on `res.locals`.
 *
 * It is also the request's life: `signal` aborts the moment the client leaves, whatever the request is doing, and
 * everything the request takes is held through hold(), given back once when it ends, or at once if it already has.
 * So a client that leaves during any await of any layer cancels what follows and leaks nothing.
 */
export class RequestContext {
  private readonly aborter = new AbortController();
  /** Aborted when the client leaves before its answer was written whole. */
  readonly signal: AbortSignal = this.aborter.signal;
  private held: Releasable[] | undefined = [];
  /** The key that authenticated the request (auth). */
  key: ApiKeyRecord | undefined = undefined;
  /** Admission passed the key's rate limit: the request counts against its RPM, and so does its log line. */
  charged = false;
  /** The key's hold on its cross-replica limits (a request, a slot, reserved tokens), settled when usage is known. */
  limitTicket: LimitTicket | undefined = undefined;
  /** What the request holds of its key's day or month budgets (limits/key-budgets.ts), settled with the usage. */
  budgetHold: BudgetTicket | undefined = undefined;
  /** The admitted body, until the handler takes it (admission → validation). */
  admittedBody: AdmittedBody | undefined = undefined;
  /** A model server answered the request (routing): the usage ledger counts it. */
  reachedModel = false;
  /** The catalog id the request resolved to (validation); metrics label only catalog ids. */
  modelId: string | undefined = undefined;
  /** Settles when the route's handler has finished (accounted usage included); unset for routes without one. */
  handled: Promise<void> | undefined = undefined;
  /** Streaming: seconds from the request to the first generated token (the relay's token clock). */
  firstTokenSeconds: number | undefined = undefined;
  /** The request's trace span, when traces are on (observability/tracing.ts). */
  span: Span | undefined = undefined;
  /** The log line's fields. */
  readonly log: RequestLogFields = {};

  constructor(
    readonly requestId: string,
    /** performance.now() when the request arrived. */
    readonly started: number,
  ) {}

  /** The response has closed (answered, or the client left). */
  get ended(): boolean {
    return this.held === undefined;
  }

  /**
   * Keeps `resource` until the request ends. If it has ended already (the client left while the resource was being
   * taken), the resource is given back now and ClientGone thrown: nothing taken after the end outlives it.
   */
  hold<T extends Releasable>(resource: T, when: string): T {
    if (!this.held) {
      resource.release();
      throw new ClientGone(when);
    }
    this.held.push(resource);
    return resource;
  }

  /** Throws ClientGone if the client has left (after an await, before the next step). */
  stillWanted(when: string): void {
    if (this.signal.aborted) throw new ClientGone(when);
  }

  /** The response closed: the client left (`clientGone`: the signal aborts) or its answer is out; all held is given back. */
  end(clientGone: boolean): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    if (clientGone) this.aborter.abort();
    for (const r of held) r.release();
  }
}

const CONTEXT = Symbol("requestContext");
type WithContext = ServerResponse & { [CONTEXT]?: RequestContext };

/** Opens the request's context (the front layer, first thing). */
export function openContext(res: ServerResponse, requestId: string): RequestContext {
  const ctx = new RequestContext(requestId, performance.now());
  (res as WithContext)[CONTEXT] = ctx;
  return ctx;
}

/** The request's context; every request that reached the app has one. */
export function contextOf(res: ServerResponse): RequestContext {
  const ctx = (res as WithContext)[CONTEXT];
  if (!ctx) throw new Error("no request context: the app's front layer did not run");
  return ctx;
}

/** The context if the front layer ran (error paths that may run before it). */
export function maybeContextOf(res: ServerResponse): RequestContext | undefined {
  return (res as WithContext)[CONTEXT];
}
