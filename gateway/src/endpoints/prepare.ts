import { clientText } from "../api/client-text";
import { errors } from "../api/errors";
import { parseBody } from "../api/schemas";
import { callerMayUse } from "../auth/middleware";
import type { AdmittedBody, JsonMember } from "../context/admitted-body";
import type { RequestContext } from "../context/request-context";
import { HeldBody } from "../http/body/held-body";
import { memberKey, replaceMembers } from "../http/body/json-members";
import type { PickContext } from "../upstream/balancer";
import type { ModelPool } from "../upstream/model-pool";
import { BLOCK_CHARS, prefixHashes } from "../upstream/prefix-index";
import { targetId, type ModelRegistry } from "../upstream/registry";
import { ACTED_ON, type EndpointSpec, type UsageWanted } from "./spec";

/** What the rest of the path needs of a validated request; the parsed body itself is not kept. */
export interface PreparedRequest {
  /** The catalog id that serves it (an adapter's for an adapter): logs, metrics and the answer's `model`. */
  model: string;
  pool: ModelPool;
  /** The `model` the model server gets: the served model name, or the adapter's (vLLM's LoRA name). */
  upstreamModel: string;
  stream: boolean;
  clientWantsUsage: UsageWanted;
  body: HeldBody;
  pick: PickContext;
  /** The stored response the request continues (`previous_response_id`), if any. */
  continues?: string;
}

/** Which of ACTED_ON the body holds more than once (keys compared decoded: "mod\u0065l" is "model"). */
function repeatedMembers(members: readonly JsonMember[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const m of members) {
    const key = memberKey(m);
    if (!ACTED_ON.has(key)) continue;
    if (seen.has(key)) repeated.add(key);
    seen.add(key);
  }
  return repeated;
}

/**
 * Validation and model resolution, the route level before routing: checks the admitted body against the
 * endpoint's schema, resolves the model (one the key may not use does not exist for it) and builds the bytes to
 * send. Synchronous on purpose: the parsed body (which may take many times the body's size) is garbage as soon
 * as this returns, before the request waits for a replica or an answer. The body goes upstream as the client's
 * own bytes with `model` mapped and the members the endpoint rewrites replaced: unknown fields pass untouched.
 */
export function prepareRequest(
  spec: EndpointSpec,
  admitted: AdmittedBody,
  ctx: RequestContext,
  registry: ModelRegistry,
  /** Members the route sets itself (key -> JSON text), e.g. the response id it chose. */
  extra: Readonly<Record<string, string>> = {},
  /** The model holding a stored response this request continues, if it can tell (an alias then stays on it). */
  homeOf?: (responseId: string) => ModelPool | undefined,
): PreparedRequest {
  const parsed = parseBody(spec.schema, admitted.json);
  if (!parsed.ok) throw parsed.error;
  const request = parsed.value;
  const { model } = request;
  const stream = spec.streams(request);
  ctx.log.model = clientText(model);
  ctx.log.stream = stream;

  // A model id, or an alias: its first model with a ready replica. A key may use an alias it is given, whichever
  // model the alias reaches.
  // A turn that continues a stored response stays on the model that holds it, when the alias stands for it.
  const continues = spec.continues?.(request);
  const home = continues && homeOf ? homeOf(continues) : undefined;
  const resolved = registry.resolve(model, home);
  // Metrics label the catalog id (a LoRA adapter's own) from here on, even when the key may not use it (as the
  // request was made).
  const served = resolved && targetId(resolved);
  if (served) ctx.modelId = served;
  if (!resolved || !served || !callerMayUse(ctx, model)) throw errors.modelNotFound(model);
  const { pool, alias, adapter } = resolved;
  if (pool.model.category !== spec.category) throw errors.wrongCategory(model, spec.what);
  if (alias) {
    // Logs, metrics and the answer name the model that served; the log line also the alias asked for.
    ctx.log.alias = alias.id;
    ctx.log.model = served;
  }
  // An adapter goes to its base model's replicas under its own name (vLLM's LoRA name).
  const upstreamModel = adapter ?? pool.upstreamModel;

  // A member the gateway acts on that the client repeated is rewritten too: the gateway decided on JSON.parse's
  // value (the last), and a model server keeping the first would otherwise serve a model the key may not use.
  const repeated = repeatedMembers(admitted.members);
  const replace: Record<string, string> = {};
  if (upstreamModel !== model || repeated.has("model")) replace.model = JSON.stringify(upstreamModel);
  Object.assign(replace, spec.upstreamMembers(request, repeated), extra);
  const bytes = Object.keys(replace).length > 0 ? replaceMembers(admitted.bytes, admitted.members, replace) : admitted.bytes;

  // Hashing the prompt costs a pass over it: only for models whose routing weighs prefixes.
  const pick: PickContext = pool.routesOnPrefix ? { prefix: prefixHashes(spec.promptText(request, pool.model.routing.minPrefixBlocks * BLOCK_CHARS), pool.model.routing.minPrefixBlocks) } : {};
  if (adapter !== undefined) pick.adapter = adapter;
  return {
    model: served,
    pool,
    upstreamModel,
    stream,
    clientWantsUsage: spec.clientWantsUsage(request),
    body: new HeldBody(bytes, admitted.lease),
    pick,
    continues,
  };
}
