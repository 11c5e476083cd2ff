import type { Request, Response } from "express";
import type { GenerationResult } from "../engine";
import type { Adapter } from "../lora";
import type { Slot } from "../scheduler";
import { VllmError } from "../errors";
import { nowMs } from "../latency";
import { clientGoneSignal, dropAfterTokens, errorAfterTokens, type SimulatorContext } from "./context";
import { startEventStream } from "./sse";

/**
 * The part every generating endpoint shares (chat, completions, responses): admission while a status can still be
 * sent (the bounded-queue fault's 429), the stream headers, the engine run per prompt, and the injected faults and
 * client disconnects with their bookkeeping. The endpoint only says what each token looks like on the wire.
 */

/** Thrown from the token callback after the socket was destroyed on purpose. */
class StreamDropped extends Error {}

/** Thrown from the token callback to simulate an engine failure mid-generation. */
export class InjectedEngineError extends VllmError {
  constructor() {
    super(500, "Simulated engine failure during generation (X-Stream-Error-After-Tokens).");
  }
}

/** The per-request faults (`X-Drop-After-Tokens`, `X-Stream-Error-After-Tokens`), read before any work so a bad header is a 400. */
export interface FaultPlan {
  dropAfter: number | undefined;
  errorAfter: number | undefined;
}

export function faultPlan(ctx: SimulatorContext, req: Request): FaultPlan {
  return { dropAfter: dropAfterTokens(ctx, req), errorAfter: errorAfterTokens(req) };
}

/** One engine request: a prompt and the tokens it will produce. */
export interface TokenJob {
  promptTokens: readonly string[];
  outputTokens: number;
  /** Writes token i to the open stream; only called when streaming. */
  writeToken?: (i: number) => void;
}

export interface GenerationRun {
  ctx: SimulatorContext;
  req: Request;
  res: Response;
  arrivalMs: number;
  stream: boolean;
  faults: FaultPlan;
  /** The LoRA adapter the request names, if any. */
  adapter?: Adapter;
  /** One per prompt; vLLM runs each prompt of a request as its own engine request. */
  jobs: readonly TokenJob[];
  /** Called once the 200 stream headers are out, before queueing and prefill (the Responses API's created events). */
  onStreamStart?: () => void;
}

/**
 * Runs the jobs to the end. Resolves with each job's result (cached prompt tokens) when every token was
 * produced; null when the client went away or the connection was dropped on purpose (the response is over,
 * nothing more may be written). An injected
 * engine error is rethrown for the error handler (500, or the in-band error event mid-stream).
 */
export async function runGeneration(run: GenerationRun): Promise<GenerationResult[] | null> {
  const { ctx, req, res, arrivalMs, stream, faults, jobs } = run;
  const clientGone = clientGoneSignal(res);
  // A failing job stops its siblings (several prompts in one completions request).
  const siblings = new AbortController();
  const signal = AbortSignal.any([clientGone, siblings.signal]);
  const admissions = admitAll(ctx, jobs.length, signal, run.adapter); // the bounded-queue fault throws QueueFullError -> 429 while a status can still be sent
  if (stream) {
    startEventStream(res);
    run.onStreamStart?.();
  }

  let dropped = false;
  const drop = (): never => {
    dropped = true;
    // destroySoon flushes the chunks already written, then destroys: the client sees exactly N tokens.
    (res.socket ?? req.socket).destroySoon();
    throw new StreamDropped();
  };
  const { dropAfter, errorAfter } = faults;
  let firstError: unknown;
  const results = await Promise.all(
    jobs.map((job, j) => {
      const onToken = (i: number): void => {
        if (dropAfter !== undefined && i >= dropAfter) drop();
        if (errorAfter !== undefined && i >= errorAfter) throw new InjectedEngineError();
        if (stream) job.writeToken?.(i);
        if (dropAfter !== undefined && i + 1 >= dropAfter) drop();
      };
      return ctx.engine
        .run(admissions[j] as Promise<Slot>, { promptTokens: job.promptTokens, outputTokens: job.outputTokens, useCache: true, adapter: run.adapter, signal, arrivalMs, onToken })
        .catch((err: unknown) => {
          firstError ??= err;
          siblings.abort(err);
          return null;
        });
    }),
  );
  if (firstError === undefined) return results as GenerationResult[];

  const e2e = (nowMs() - arrivalMs) / 1000;
  if (dropped) {
    ctx.counters.failedTotal++;
    return null;
  }
  if (firstError instanceof InjectedEngineError) {
    // Rethrown: the error handler answers 500, or, mid-stream, sends the error event.
    ctx.counters.failedTotal++;
    ctx.metrics.requestFinished("abort", e2e);
    throw firstError;
  }
  if (clientGone.aborted) {
    ctx.counters.cancelledTotal++;
    ctx.metrics.requestFinished("abort", e2e);
    return null;
  }
  throw firstError;
}

/** Admits every job or none: if the queue is full part-way, the places already taken are given back. */
function admitAll(ctx: SimulatorContext, count: number, signal: AbortSignal, adapter: Adapter | undefined): Promise<Slot>[] {
  const admissions: Promise<Slot>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const admission = ctx.engine.admit(signal, adapter);
      admission.catch(() => undefined); // handled where awaited; avoid an unhandled rejection if we bail out first
      admissions.push(admission);
    }
  } catch (err) {
    for (const admission of admissions) admission.then((slot) => slot.release(), () => undefined);
    throw err;
  }
  return admissions;
}
