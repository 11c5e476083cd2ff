import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { type SimulatorConfig, type SimulatorConfigInput, SimulatorConfigSchema } from "./config";
import { InferenceEngine } from "./engine";
import { EngineStalls } from "./engine-stalls";
import { VllmError } from "./errors";
import { LoraAdapters } from "./lora";
import { SimulatorMetrics } from "./metrics";
import { PrefixCache } from "./prefix-cache";
import { ResponseStore } from "./response-store";
import { chatCompletionsHandler } from "./routes/chat";
import type { SimulatorContext } from "./routes/context";
import { completionsHandler } from "./routes/completions";
import { embeddingsHandler } from "./routes/embeddings";
import { loadLoraHandler, unloadLoraHandler } from "./routes/lora";
import { modelsHandler } from "./routes/models";
import { cancelResponseHandler, createResponseHandler, deleteResponseHandler, retrieveResponseHandler } from "./routes/responses";
import { writeStreamError } from "./routes/sse";
import { QueueFullError, Scheduler } from "./scheduler";
import { createCounters, type SimulatorStats } from "./stats";

/** Assembles one simulated vLLM instance and serves it over HTTP. */

export interface RunningSimulator {
  /** Base URL without `/v1`, e.g. "http://127.0.0.1:40123". */
  url: string;
  port: number;
  config: SimulatorConfig;
  stats(): SimulatorStats;
  /** Graceful: stop accepting, let in-flight requests finish (bounded), close keep-alive sockets. */
  close(): Promise<void>;
  /** Abrupt: destroy every open socket at once, like a crashed pod. */
  kill(): void;
}

/** How long close() lets in-flight requests finish before cutting them. */
const CLOSE_GRACE_MS = 5000;

export async function startSimulator(input: SimulatorConfigInput): Promise<RunningSimulator> {
  const config = SimulatorConfigSchema.parse(input);
  const startedAt = Date.now();
  const primaryModel = config.models[0] as string;
  const { blockSize, capacityBlocks } = config.prefixCache;

  const { lora } = config;
  const scheduler = new Scheduler(config.maxNumSeqs, config.maxWaitingQueueLength, blockSize, lora.enabled ? lora.maxLoras : Infinity);
  const stalls = new EngineStalls();
  const counters = createCounters();
  const adapters = new LoraAdapters(lora, config.models, stalls, counters);
  adapters.registerStatic();
  const prefixCache = config.prefixCache.enabled ? new PrefixCache(blockSize, capacityBlocks) : null;
  const metrics = new SimulatorMetrics(
    primaryModel,
    {
      running: () => scheduler.running,
      waiting: () => scheduler.waiting,
      kvCacheUsage: () => Math.min(1, scheduler.blocksInUse / capacityBlocks),
    },
    { blockSize, capacityBlocks, prefixCaching: config.prefixCache.enabled },
    lora.enabled ? lora.maxLoras : undefined,
  );
  const ctx: SimulatorContext = {
    config,
    engine: new InferenceEngine(config, scheduler, prefixCache, metrics, counters, stalls, adapters),
    metrics,
    counters,
    adapters,
    isReady: () => Date.now() - startedAt >= config.startupDelayMs,
  };

  let closing = false;
  const app = createApp(ctx, () => closing);
  const server = createServer(app);
  // Keep-alive sockets outlive requests; track them, and which carry a request in flight, so close()
  // can end idle ones at once (server.closeIdleConnections misses some) and kill() can end all.
  const sockets = new Set<Socket>();
  const busy = new Map<Socket, number>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  server.on("request", (req, res) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.on("close", () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (closing && left <= 0) socket.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("simulator: unexpected server address");
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    config,
    stats: () => ({ ...counters, lastRequestHeaders: { ...counters.lastRequestHeaders }, running: scheduler.running, waiting: scheduler.waiting }),
    close: () => {
      closing = true;
      closed ??= gracefulClose(server, sockets, busy);
      return closed;
    },
    kill: () => {
      closing = true;
      server.close();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}

function gracefulClose(server: Server, sockets: Set<Socket>, busy: Map<Socket, number>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      for (const socket of sockets) socket.destroy();
    }, CLOSE_GRACE_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // Idle keep-alive sockets would otherwise hold close() open until they time out; busy ones end
    // after their response (see the "request" listener).
    for (const socket of sockets) if (!busy.has(socket)) socket.end();
  });
}

function createApp(ctx: SimulatorContext, isClosing: () => boolean): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.use((_req, res, next) => {
    if (ctx.config.podName) res.setHeader("x-inference-pod", ctx.config.podName);
    // While shutting down, tell clients not to reuse the connection.
    if (isClosing()) res.setHeader("connection", "close");
    next();
  });
  // Parse any content type as JSON (clients sometimes omit it); express.json leaves no-body requests undefined.
  const json = express.json({ limit: ctx.config.maxRequestBodyBytes, type: () => true });

  app.get("/health", (_req, res) => {
    res.status(ctx.isReady() ? 200 : 503).end();
  });
  app.get("/metrics", async (_req, res) => {
    res.setHeader("content-type", ctx.metrics.registry.contentType);
    res.send(await ctx.metrics.registry.metrics());
  });
  // vLLM's API-key middleware: only /v1 paths are guarded, with this exact body.
  const apiKey = ctx.config.apiKey;
  if (apiKey) {
    app.use("/v1", (req, res, next) => {
      if (req.headers.authorization === `Bearer ${apiKey}`) next();
      else res.status(401).json({ error: "Unauthorized" });
    });
  }
  app.get("/v1/models", modelsHandler(ctx));
  // As vLLM: the adapter routes exist only with VLLM_ALLOW_RUNTIME_LORA_UPDATING; else they are unknown paths (404).
  if (ctx.config.lora.runtimeUpdating) {
    app.post("/v1/load_lora_adapter", json, loadLoraHandler(ctx));
    app.post("/v1/unload_lora_adapter", json, unloadLoraHandler(ctx));
  }
  app.post("/v1/chat/completions", json, chatCompletionsHandler(ctx));
  app.post("/v1/completions", json, completionsHandler(ctx));
  app.post("/v1/embeddings", json, embeddingsHandler(ctx));
  const store = new ResponseStore(ctx.config.responsesStoreSize);
  app.post("/v1/responses", json, createResponseHandler(ctx, store));
  app.get("/v1/responses/:id", retrieveResponseHandler(ctx, store));
  app.post("/v1/responses/:id/cancel", cancelResponseHandler(ctx, store));
  app.delete("/v1/responses/:id", deleteResponseHandler());
  app.use((_req, _res, next) => next(new VllmError(404, "Not Found", null, "Not Found")));
  app.use(errorHandler);
  return app;
}

/** Every error leaves in vLLM's envelope; after a stream has started it goes in the SSE body, as vLLM does. */
function errorHandler(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const error = toVllmError(err);
  if (res.headersSent) {
    if (!res.writableEnded && !res.destroyed) {
      writeStreamError(res, error.toBody());
      res.end();
    }
    return;
  }
  res.status(error.status).json(error.toBody());
}

function toVllmError(err: unknown): VllmError {
  if (err instanceof VllmError) return err;
  if (err instanceof QueueFullError) return new VllmError(429, err.message);
  const bodyError = err as { type?: unknown; status?: unknown; message?: unknown };
  if (bodyError.type === "entity.too.large") return new VllmError(413, "Request body too large.");
  if (bodyError.type === "entity.parse.failed") return new VllmError(400, `JSON decode error: ${String(bodyError.message)}`);
  if (typeof bodyError.status === "number" && bodyError.status >= 400 && bodyError.status < 500) {
    return new VllmError(bodyError.status, String(bodyError.message ?? "Bad Request"));
  }
  return new VllmError(500, err instanceof Error ? err.message : "Internal server error");
}
