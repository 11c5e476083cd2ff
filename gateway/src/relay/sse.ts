import type { ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { errors } from "../api/errors";
import type { EndpointSpec, Usage, UsageWanted } from "../endpoints/spec";
import { writable } from "../http/client-stall";
import { normalizeUpstreamError } from "../upstream/normalize-error";
import { errorCode } from "../upstream/send";
import { SSE_DONE, sseErrorEvent } from "../api/sse-events";
import { eachChunk } from "./each-chunk";
import { startEventStream } from "./sse-events";
import type { TokenClock } from "./token-clock";

export interface SseRelay {
  res: ServerResponse;
  spec: EndpointSpec;
  /** The catalog id the client asked for. */
  modelId: string;
  /** Set when the model server knows the model by another name: `model` is rewritten back in every chunk. */
  rewriteModel: boolean;
  clientWantsUsage: UsageWanted;
  /** Longest wait for a client that does not read its stream. */
  stallMs: number;
  signal: AbortSignal;
  tokens: TokenClock;
}

const DECODE_STREAMING = { stream: true } as const;

/**
 * Relays an upstream SSE stream event by event, as each arrives (no buffering beyond one upstream chunk): the
 * events of one upstream chunk leave in one write. Error events are normalized to the envelope; a stream that
 * breaks off gets an error event and [DONE], so the SDKs raise instead of silently returning a truncated answer.
 */
export async function relaySse(upstream: Dispatcher.ResponseData, relay: SseRelay): Promise<{ usage?: Usage; streamError?: string; tokenEvents: number }> {
  const { res, spec, modelId, rewriteModel } = relay;
  let usage: Usage | undefined;
  let done = false;
  let streamError: string | undefined;
  let idle = false;
  /** Events sent on (the Responses API numbers its events: an error event the gateway adds continues the count). */
  let sent = 0;
  /** Events that carried generated output: what a stream cut before its usage is counted by. */
  let tokenEvents = 0;
  /** What one upstream chunk turns into, written at once. */
  let out = "";

  if (!res.headersSent) startEventStream(res);

  const onEvent = (ev: EventSourceMessage) => {
    if (done) return;
    const data = ev.data;
    if (data === "[DONE]") {
      done = true;
      out += SSE_DONE;
      return;
    }
    // Parse only what needs looking into; plain token chunks go through as they came.
    let parsed: Record<string, unknown> | undefined;
    const rename = rewriteModel && (spec.streamModel?.carries(data) ?? true);
    if (rename || data.includes('"error"') || spec.mayCarryUsage(data)) {
      try {
        parsed = JSON.parse(data) as Record<string, unknown>;
      } catch {
        out += `data: ${data}\n\n`;
        return;
      }
      if (parsed.error) {
        const code = (parsed.error as { code?: unknown }).code;
        const apiErr = normalizeUpstreamError(typeof code === "number" ? code : 500, parsed, modelId);
        streamError = apiErr.message;
        out += sseErrorEvent(apiErr);
        return;
      }
    }
    const facts = spec.streamEvent(data, parsed, relay.clientWantsUsage);
    if (facts.usage) usage = facts.usage;
    if (facts.error) streamError = facts.error;
    if (facts.final) done = true;
    if (facts.drop) return;
    if (facts.token) {
      relay.tokens.token();
      tokenEvents++;
    }
    // Named events (the Responses API's `event: response.output_text.delta`) keep their names.
    if (ev.event) out += `event: ${ev.event}\n`;
    sent++;
    if (parsed && (rename || facts.rewritten)) {
      if (rename) {
        if (spec.streamModel) spec.streamModel.rename(parsed, modelId);
        else parsed.model = modelId;
      }
      out += `data: ${JSON.stringify(parsed)}\n\n`;
    } else out += `data: ${facts.send ?? data}\n\n`;
  };

  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();
  try {
    await eachChunk(upstream.body, (chunk) => {
      parser.feed(decoder.decode(chunk, DECODE_STREAMING));
      if (res.destroyed) return "stop";
      if (out) {
        res.write(out);
        out = "";
      }
      if (res.writableNeedDrain) return writable(res, relay.stallMs);
    });
  } catch (err) {
    if (relay.signal.aborted || res.destroyed) return { usage, tokenEvents };
    idle = errorCode(err) === "UND_ERR_BODY_TIMEOUT";
    streamError = idle ? "the model server stopped sending tokens (idle timeout)" : "the model server closed the connection mid-stream";
  }
  if (!res.destroyed) {
    if (!done) {
      streamError ??= "the model server ended the stream without [DONE]";
      const apiErr = idle ? errors.streamIdle(modelId) : errors.streamInterrupted(modelId, streamError);
      out += spec.streamBroken ? spec.streamBroken(apiErr, sent) : sseErrorEvent(apiErr) + SSE_DONE;
    }
    res.end(out || undefined);
  }
  return { usage, streamError, tokenEvents };
}
