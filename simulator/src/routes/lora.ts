import type { Request, Response } from "express";
import { z } from "zod";
import { VllmError } from "../errors";
import type { SimulatorContext } from "./context";

/**
 * `POST /v1/load_lora_adapter` and `POST /v1/unload_lora_adapter` as vLLM 0.14 serves them when
 * `VLLM_ALLOW_RUNTIME_LORA_UPDATING` is set (vllm/entrypoints/serve/lora/api_router.py): success is 200 with a plain
 * text body and no content type; a refusal is vLLM's error envelope.
 */

// vLLM's pydantic request models: required strings; an unload's `lora_int_id` is accepted and not used.
const LoadSchema = z.object({ lora_name: z.string(), lora_path: z.string() });
const UnloadSchema = z.object({ lora_name: z.string(), lora_int_id: z.number().int().nullish() });

/**
 * A body pydantic refuses: vLLM's validation handler answers 400 with type `Bad Request` and no `param`, the message
 * listing pydantic's errors (`missing`, `string_type`, …) by location.
 */
function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((issue) => {
    const loc = ["body", ...issue.path.map(String)].map((p) => `'${p}'`);
    const where = loc.length === 1 ? `(${loc[0]},)` : `(${loc.join(", ")})`;
    return `{'type': '${pydanticType(issue)}', 'loc': ${where}, 'msg': '${pydanticMessage(issue)}'}`;
  });
  throw new VllmError(400, `[${errors.join(", ")}]`, null, "Bad Request");
}

const PYDANTIC: Record<string, [type: string, msg: string]> = {
  missing: ["missing", "Field required"],
  object: ["model_attributes_type", "Input should be a valid dictionary or object to extract fields from"],
  string: ["string_type", "Input should be a valid string"],
  int: ["int_type", "Input should be a valid integer"],
  number: ["int_type", "Input should be a valid integer"],
};

function pydanticKind(issue: z.core.$ZodIssue): string {
  if (issue.code !== "invalid_type") return "int";
  return issue.message.endsWith("received undefined") ? "missing" : issue.expected;
}

const pydanticType = (issue: z.core.$ZodIssue): string => (PYDANTIC[pydanticKind(issue)] ?? ["value_error"])[0];
const pydanticMessage = (issue: z.core.$ZodIssue): string => PYDANTIC[pydanticKind(issue)]?.[1] ?? issue.message;

function reply(res: Response, text: string): void {
  res.status(200).end(text);
}

export function loadLoraHandler(ctx: SimulatorContext) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!ctx.isReady()) throw new VllmError(503, "The server is not ready yet: the model is still loading.");
    const body = parseBody(LoadSchema, req.body);
    reply(res, await ctx.adapters.load(body.lora_name, body.lora_path));
  };
}

export function unloadLoraHandler(ctx: SimulatorContext) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!ctx.isReady()) throw new VllmError(503, "The server is not ready yet: the model is still loading.");
    const body = parseBody(UnloadSchema, req.body);
    reply(res, await ctx.adapters.unload(body.lora_name));
  };
}
