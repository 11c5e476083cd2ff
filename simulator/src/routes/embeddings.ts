import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import { embedTokens, embeddingTokens, toBase64Float32 } from "../embedding";
import { badRequest, VllmError } from "../errors";
import { nowMs } from "../latency";
import { embeddingInputs, EmbeddingsRequestSchema } from "../requests/embeddings-request";
import { parseRequest } from "../requests/validation";
import { beginInferenceRequest, clientGoneSignal, maybeInjectFailure, resolveTarget, type SimulatorContext, unixSeconds } from "./context";

/** POST /v1/embeddings for `kind: "embed"` models, with vLLM's response shape and checks. */
export function embeddingsHandler(ctx: SimulatorContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const arrivalMs = nowMs();
    beginInferenceRequest(ctx, req);
    const request = parseRequest(EmbeddingsRequestSchema, req.body);
    if (ctx.config.kind !== "embed") throw badRequest("The model does not support Embeddings API");
    const { model, adapter } = await resolveTarget(ctx, request.model);
    if (request.dimensions != null) {
      throw badRequest(`Model "${model}" does not support matryoshka representation, changing output dimensions will lead to poor results.`);
    }
    const inputs = embeddingInputs(request.input);
    if (inputs.length === 0) throw badRequest("Input cannot be empty.", "input");
    if (inputs.some((input) => input.kind === "ids" && input.ids.length === 0)) throw badRequest("Token id inputs cannot be empty.", "input");

    const tokenLists = inputs.map(embeddingTokens);
    for (const tokens of tokenLists) {
      if (tokens.length > ctx.config.maxModelLen) {
        throw new VllmError(
          400,
          `This model's maximum context length is ${ctx.config.maxModelLen} tokens. However, you requested ${tokens.length} tokens in the input for embedding generation. Please reduce the length of the input.`,
          "input_tokens",
        );
      }
    }
    maybeInjectFailure(ctx);

    const signal = clientGoneSignal(res);
    const admission = ctx.engine.admit(signal, adapter);
    const allTokens = tokenLists.flat();
    try {
      // Pooling is prefill only: the whole batch's tokens cost prefill time, nothing is generated.
      await ctx.engine.run(admission, { promptTokens: allTokens, outputTokens: 0, useCache: false, adapter, signal, arrivalMs });
    } catch (err) {
      if (signal.aborted) {
        ctx.counters.cancelledTotal++;
        ctx.metrics.requestFinished("abort", (nowMs() - arrivalMs) / 1000);
        return;
      }
      throw err;
    }

    const base64 = request.encoding_format === "base64";
    const data = tokenLists.map((tokens, index) => {
      const vector = embedTokens(tokens, ctx.config.embeddingDimensions);
      return { index, object: "embedding", embedding: base64 ? toBase64Float32(vector) : Array.from(vector) };
    });
    ctx.metrics.requestFinished("stop", (nowMs() - arrivalMs) / 1000);
    res.json({
      id: `embd-${randomUUID().replace(/-/g, "")}`,
      object: "list",
      created: unixSeconds(),
      model,
      data,
      usage: { prompt_tokens: allTokens.length, total_tokens: allTokens.length, completion_tokens: 0, prompt_tokens_details: null },
    });
    ctx.counters.completedTotal++;
  };
}
