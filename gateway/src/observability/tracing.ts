import type { IncomingMessage, ServerResponse } from "node:http";
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { RequestContext } from "../context/request-context";

/** GenAI operation names (OpenTelemetry semantic conventions, gen_ai.operation.name) by endpoint. */
const OPERATIONS: Record<string, string> = {
  "/v1/chat/completions": "chat",
  "/v1/responses": "chat",
  "/v1/completions": "text_completion",
  "/v1/embeddings": "embeddings",
};

/** At most this many finished spans wait for export; past it spans are dropped, never queued without bound. */
const MAX_QUEUED_SPANS = 2048;

export interface TracingOptions {
  /** OTLP/HTTP traces endpoint, e.g. http://otel-collector.monitoring:4318/v1/traces. */
  endpoint?: string;
  /** Share of traces started here that are recorded (a caller's sampled flag is followed). */
  sampleRatio: number;
  /** Instead of OTLP (tests: an in-memory exporter). */
  exporter?: SpanExporter;
  serviceVersion?: string;
}

/**
 * One span per inference request, in the GenAI semantic conventions: `{operation} {model}`, kind CLIENT (the
 * gateway calls a model server), model asked and model that served, tokens, time to first token, the replica.
 * A caller's `traceparent` is the parent; the span's own context goes to the model server, so vLLM's spans (with
 * its `--otlp-traces-endpoint`) join the same trace. Exists only when traces are configured: off, the request
 * path calls nothing (`RequestContext.span` stays unset).
 */
export class RequestTracing {
  private readonly propagator = new W3CTraceContextPropagator();

  private constructor(
    private readonly tracer: Tracer,
    private readonly provider: TracerProvider,
  ) {}

  static create(opts: TracingOptions): RequestTracing | undefined {
    const exporter = opts.exporter ?? (opts.endpoint ? new OTLPTraceExporter({ url: opts.endpoint }) : undefined);
    if (!exporter) return undefined;
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": "ai-platform-gateway", ...(opts.serviceVersion ? { "service.version": opts.serviceVersion } : {}) }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(opts.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: MAX_QUEUED_SPANS, scheduledDelayMillis: 1000 })],
    });
    return new RequestTracing(provider.getTracer("ai-platform-gateway"), provider);
  }

  /**
   * Opens the request's span once its model is known (before the model server is called) and returns the
   * headers that carry it upstream.
   */
  begin(req: IncomingMessage, ctx: RequestContext, path: string, requestedModel: string, servedModel: string): Record<string, string> {
    const operation = OPERATIONS[path] ?? "chat";
    const parent = this.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(
      `${operation} ${servedModel}`,
      {
        kind: SpanKind.CLIENT,
        startTime: performance.timeOrigin + ctx.started,
        attributes: {
          "gen_ai.operation.name": operation,
          "gen_ai.provider.name": "vllm",
          "gen_ai.request.model": requestedModel,
          "gen_ai.response.model": servedModel,
          "http.request.method": "POST",
          "url.path": path,
          "ai_platform.request_id": ctx.requestId,
        },
      },
      parent,
    );
    ctx.span = span;
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
    return headers;
  }

  /** The response closed: what the request learned goes on its span, which ends. */
  end(res: ServerResponse, ctx: RequestContext, endedAt = performance.now()): void {
    const span = ctx.span;
    if (!span) return;
    const f = ctx.log;
    const attributes: Attributes = { "http.response.status_code": res.headersSent ? res.statusCode : 499 };
    if (ctx.key) attributes["ai_platform.api_key.name"] = ctx.key.name;
    if (f.alias) attributes["ai_platform.alias"] = f.alias;
    if (f.stream !== undefined) attributes["ai_platform.stream"] = f.stream;
    if (f.promptTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = f.promptTokens;
    if (f.completionTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = f.completionTokens;
    // No span attribute for it in the GenAI conventions yet: vLLM's own spans use this name.
    if (ctx.firstTokenSeconds !== undefined) attributes["gen_ai.latency.time_to_first_token"] = ctx.firstTokenSeconds;
    if (f.replica) attributes["server.address"] = f.replica;
    if (f.attempts !== undefined) attributes["ai_platform.attempts"] = f.attempts;
    if (f.heldMs !== undefined) attributes["ai_platform.held_ms"] = f.heldMs;
    span.setAttributes(attributes);
    const error = f.errorCode ?? f.streamError ?? (res.writableFinished ? undefined : "client_aborted");
    if (error || res.statusCode >= 500) {
      span.setAttribute("error.type", error ?? String(res.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? undefined });
    }
    // When the response closed (accounting may run later, once the handler knows the usage).
    span.end(performance.timeOrigin + endedAt);
    ctx.span = undefined;
  }

  /** Exports what is queued (shutdown, tests). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

export type { Span };
