import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import type { LoraModule, SimulatorConfigInput } from "./config";

/**
 * Command-line flags -> simulator config. Flag names follow llm-d-inference-sim / vLLM where they exist
 * (`--model`, `--served-model-name`, `--max-num-seqs`, ...); durations accept Go-style units ("20ms", "1s")
 * or plain milliseconds. Precedence: flags, then env (SIM_MODEL, POD_NAME, VLLM_API_KEY, PORT,
 * VLLM_ALLOW_RUNTIME_LORA_UPDATING), then `--config` YAML/JSON.
 */

const OPTIONS = {
  config: { type: "string" },
  model: { type: "string", multiple: true },
  "served-model-name": { type: "string", multiple: true },
  kind: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  "tool-calling": { type: "boolean" },
  "enable-auto-tool-choice": { type: "boolean" },
  "max-num-seqs": { type: "string" },
  "max-waiting-queue-length": { type: "string" },
  "max-model-len": { type: "string" },
  "embedding-dimensions": { type: "string" },
  "responses-store-size": { type: "string" },
  "ttft-ms": { type: "string" },
  "time-to-first-token": { type: "string" },
  "prefill-overhead": { type: "string" },
  "itl-ms": { type: "string" },
  "inter-token-latency": { type: "string" },
  "prefill-time-per-token-ms": { type: "string" },
  "prefill-time-per-token": { type: "string" },
  "time-factor-under-load": { type: "string" },
  "startup-delay-ms": { type: "string" },
  "startup-duration": { type: "string" },
  "failure-rate": { type: "string" },
  "failure-injection-rate": { type: "string" },
  "failure-status": { type: "string" },
  "drop-stream-after-tokens": { type: "string" },
  "enable-prefix-cache": { type: "boolean" },
  "no-prefix-cache": { type: "boolean" },
  "block-size": { type: "string" },
  "kv-cache-size": { type: "string" },
  "pod-name": { type: "string" },
  "api-key": { type: "string" },
  "max-request-body-size-mb": { type: "string" },
  "enable-lora": { type: "boolean" },
  "max-loras": { type: "string" },
  "max-cpu-loras": { type: "string" },
  "max-lora-rank": { type: "string" },
  "lora-load-time-ms": { type: "string" },
  "lora-swap-in-time-ms": { type: "string" },
  "lora-missing-path-pattern": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export const CLI_USAGE = `Usage: npm run sim -- [flags]
  --model NAME (repeatable)        served model names; first is primary (env SIM_MODEL, comma-separated)
  --served-model-name NAME         alias of --model (vLLM spelling)
  --kind generate|embed            chat completions or embeddings (default generate)
  --host ADDR --port N             listen address (default 127.0.0.1, port 0 = ephemeral; env PORT)
  --tool-calling                   answer requests with tools by tool calls (alias --enable-auto-tool-choice)
  --max-num-seqs N                 concurrent running requests (default 16)
  --max-waiting-queue-length N     fault: 429 when N requests already wait (default: no bound, as vLLM)
  --max-model-len N                context window in tokens (default 8192)
  --embedding-dimensions N         embedding size (default 384)
  --responses-store-size N         responses kept for GET and previous_response_id (default 1000, 0 = none)
  --ttft-ms D                      prefill overhead (aliases --time-to-first-token, --prefill-overhead)
  --itl-ms D                       inter-token latency (alias --inter-token-latency)
  --prefill-time-per-token-ms D    per uncached prompt token (alias --prefill-time-per-token)
  --time-factor-under-load F       latency multiplier at full batch (>= 1)
  --startup-delay-ms D             /health is 503 until then (alias --startup-duration)
  --failure-rate R                 0..1 injected failures (or --failure-injection-rate 0..100)
  --failure-status N               status of injected failures (default 500)
  --drop-stream-after-tokens N     cut every connection after N streamed tokens
  --no-prefix-cache                disable prefix caching (on by default)
  --block-size N --kv-cache-size N prefix-cache block size (tokens) and capacity (blocks)
  --pod-name NAME                  adds x-inference-pod response header (env POD_NAME)
  --api-key KEY                    /v1 requests need "Authorization: Bearer KEY", as vLLM (env VLLM_API_KEY)
  --max-request-body-size-mb N     JSON body limit (default 4)
  --enable-lora                    serve LoRA adapters (load/unload routes: env VLLM_ALLOW_RUNTIME_LORA_UPDATING=1)
  --lora-modules SPEC...           adapters at start: name=path or {"name","path","base_model_name"} JSON
  --max-loras N --max-cpu-loras N  adapters running at once (default 1), kept loaded (default max-loras)
  --max-lora-rank N                accepted, no effect (default 16)
  --lora-load-time-ms D            loading an adapter stalls the engine (default 300ms)
  --lora-swap-in-time-ms D         copying an adapter into a GPU slot (default 5ms)
  --lora-missing-path-pattern RE   fault: loads of matching paths fail with 404
  --config FILE                    YAML or JSON file with the same fields as SimulatorConfigSchema
D = duration: plain milliseconds or with a unit (us, ms, s), e.g. 20ms, 0.25ms, 1s.`;

/** "20ms", "1.5s", "250us", "20" (ms) -> milliseconds. */
export function parseDurationMs(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(us|µs|ms|s|m)?$/.exec(value.trim());
  if (!match) throw new Error(`--${flag}: expected a duration like 20ms or 1s, got "${value}"`);
  const amount = Number(match[1]);
  const scale = { us: 0.001, µs: 0.001, ms: 1, s: 1000, m: 60000 }[match[2] ?? "ms"] ?? 1;
  return amount * scale;
}

function parseNumber(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new Error(`--${flag}: expected a number, got "${value}"`);
  return n;
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

export interface CliParse {
  help: boolean;
  config: SimulatorConfigInput;
}

/** The values after each `--lora-modules` (vLLM takes several after one flag), and the arguments without them. */
function takeLoraModules(argv: readonly string[]): { rest: string[]; specs: string[] | undefined } {
  const rest: string[] = [];
  let specs: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg !== "--lora-modules" && !arg.startsWith("--lora-modules=")) {
      rest.push(arg);
      continue;
    }
    specs ??= [];
    const before = specs.length;
    if (arg.includes("=")) specs.push(arg.slice(arg.indexOf("=") + 1));
    while (i + 1 < argv.length && !(argv[i + 1] as string).startsWith("--")) specs.push(argv[++i] as string);
    if (specs.length === before) throw new Error("--lora-modules: expected name=path or a JSON object");
  }
  return { rest, specs };
}

/** vLLM's LoRAParserAction: `name=path` (one `=`, no comma), else a JSON object with `name`, `path`, `base_model_name`. */
export function parseLoraModule(spec: string): LoraModule {
  if (spec.includes("=") && !spec.includes(",")) {
    const parts = spec.split("=");
    if (parts.length !== 2) throw new Error(`--lora-modules: expected name=path, got "${spec}"`);
    return { name: parts[0] as string, path: parts[1] as string };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(spec);
  } catch {
    throw new Error(`Invalid JSON format for --lora-modules: ${spec}`);
  }
  const fields = parsed as Record<string, unknown>;
  const known = new Set(["name", "path", "base_model_name"]);
  if (typeof parsed !== "object" || parsed === null || Object.keys(fields).some((k) => !known.has(k)) || typeof fields.name !== "string" || typeof fields.path !== "string") {
    throw new Error(`Invalid fields for --lora-modules: ${spec}`);
  }
  const module: LoraModule = { name: fields.name, path: fields.path };
  if (typeof fields.base_model_name === "string") module.baseModelName = fields.base_model_name;
  return module;
}

export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliParse {
  const { rest, specs } = takeLoraModules(argv);
  const { values } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: false });
  const fromFile = values.config ? (parseYaml(readFileSync(values.config, "utf8")) as SimulatorConfigInput) : {};
  const config: Record<string, unknown> = { ...fromFile };
  const latency: Record<string, unknown> = { ...(fromFile.latency ?? {}) };
  const prefixCache: Record<string, unknown> = { ...(fromFile.prefixCache ?? {}) };
  const lora: Record<string, unknown> = { ...(fromFile.lora ?? {}) };

  const models = [...(values.model ?? []), ...(values["served-model-name"] ?? [])].flatMap((m) => m.split(",")).filter(Boolean);
  if (models.length > 0) config.models = models;
  else if (env.SIM_MODEL) config.models = env.SIM_MODEL.split(",").filter(Boolean);

  const num = (flag: keyof Values): number | undefined => {
    const v = values[flag];
    return typeof v === "string" ? parseNumber(v, flag) : undefined;
  };
  const dur = (...flags: (keyof Values)[]): number | undefined => {
    for (const flag of flags) {
      const v = values[flag];
      if (typeof v === "string") return parseDurationMs(v, flag);
    }
    return undefined;
  };
  const set = (target: Record<string, unknown>, key: string, value: unknown): void => {
    if (value !== undefined) target[key] = value;
  };

  set(config, "kind", values.kind);
  set(config, "host", values.host);
  set(config, "port", num("port") ?? (env.PORT && config.port === undefined ? parseNumber(env.PORT, "PORT") : undefined));
  if (values["tool-calling"] || values["enable-auto-tool-choice"]) config.toolCalling = true;
  set(config, "maxNumSeqs", num("max-num-seqs"));
  set(config, "maxWaitingQueueLength", num("max-waiting-queue-length"));
  set(config, "maxModelLen", num("max-model-len"));
  set(config, "embeddingDimensions", num("embedding-dimensions"));
  set(config, "responsesStoreSize", num("responses-store-size"));
  set(latency, "timeToFirstTokenMs", dur("ttft-ms", "time-to-first-token", "prefill-overhead"));
  set(latency, "interTokenLatencyMs", dur("itl-ms", "inter-token-latency"));
  set(latency, "prefillTimePerTokenMs", dur("prefill-time-per-token-ms", "prefill-time-per-token"));
  set(latency, "timeFactorUnderLoad", num("time-factor-under-load"));
  const startup = dur("startup-delay-ms", "startup-duration");
  set(config, "startupDelayMs", startup === undefined ? undefined : Math.round(startup));
  const percent = num("failure-injection-rate");
  set(config, "failureRate", num("failure-rate") ?? (percent === undefined ? undefined : percent / 100));
  set(config, "failureStatus", num("failure-status"));
  set(config, "dropStreamAfterTokens", num("drop-stream-after-tokens"));
  if (values["no-prefix-cache"]) prefixCache.enabled = false;
  else if (values["enable-prefix-cache"]) prefixCache.enabled = true;
  set(prefixCache, "blockSize", num("block-size"));
  set(prefixCache, "capacityBlocks", num("kv-cache-size"));
  set(config, "podName", values["pod-name"] ?? env.POD_NAME);
  set(config, "apiKey", values["api-key"] ?? env.VLLM_API_KEY);
  const bodyMb = num("max-request-body-size-mb");
  set(config, "maxRequestBodyBytes", bodyMb === undefined ? undefined : Math.round(bodyMb * 1024 * 1024));

  if (values["enable-lora"]) lora.enabled = true;
  set(lora, "modules", specs?.map(parseLoraModule));
  set(lora, "maxLoras", num("max-loras"));
  set(lora, "maxCpuLoras", num("max-cpu-loras"));
  set(lora, "maxLoraRank", num("max-lora-rank"));
  set(lora, "loadTimeMs", dur("lora-load-time-ms"));
  set(lora, "swapInTimeMs", dur("lora-swap-in-time-ms"));
  set(lora, "missingPathPattern", values["lora-missing-path-pattern"]);
  // vLLM reads the variable as on for "1" or "true", any case, and off for anything else.
  const runtime = env.VLLM_ALLOW_RUNTIME_LORA_UPDATING;
  if (runtime !== undefined) lora.runtimeUpdating = ["1", "true"].includes(runtime.trim().toLowerCase());

  if (Object.keys(latency).length > 0) config.latency = latency;
  if (Object.keys(prefixCache).length > 0) config.prefixCache = prefixCache;
  if (Object.keys(lora).length > 0) config.lora = lora;
  return { help: values.help === true, config: config as SimulatorConfigInput };
}
