// Model families the platform knows, and what vLLM needs to serve each well: the parser that turns the model's
// tool-call syntax into `tool_calls`, and the parser that separates its reasoning from the answer. Without the right
// parser a model trained for tools answers with raw markup in `content`, and a reasoning model leaks its thinking
// into the answer. Names are vLLM's `--tool-call-parser` / `--reasoning-parser` values (vLLM docs, "Tool Calling" and
// "Reasoning Outputs").
export interface ModelFamily {
  /** vLLM `--tool-call-parser`; undefined when the family is not trained for tools. */
  readonly toolParser?: string;
  /** vLLM `--reasoning-parser`; undefined when the family does not reason before answering. */
  readonly reasoningParser?: string;
  /** Embedding families: served with vLLM's pooling runner, never asked for generation. */
  readonly embedding?: boolean;
}

export const MODEL_FAMILIES = {
  qwen3: { toolParser: "hermes", reasoningParser: "qwen3" },
  "qwen2.5": { toolParser: "hermes" },
  llama3: { toolParser: "llama3_json" },
  llama4: { toolParser: "llama4_pythonic" },
  mistral: { toolParser: "mistral" },
  granite: { toolParser: "granite", reasoningParser: "granite" },
  "deepseek-r1": { reasoningParser: "deepseek_r1" },
  "gpt-oss": { toolParser: "openai" },
  bge: { embedding: true },
  e5: { embedding: true },
  gte: { embedding: true },
  "nomic-embed": { embedding: true },
  /** Anything else: no parser is checked. */
  other: {},
} as const satisfies Record<string, ModelFamily>;

export type FamilyName = keyof typeof MODEL_FAMILIES;
export const FAMILY_NAMES = Object.keys(MODEL_FAMILIES) as FamilyName[];
