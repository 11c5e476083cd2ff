import type { Request, Response } from "express";
import type { SimulatorContext } from "./context";
import { unixSeconds } from "./context";

/**
 * GET /v1/models in vLLM's ModelCard shape (`created` is request time, as in vLLM): one card per served name, then
 * one per registered LoRA adapter (`root` its path, `parent` its base model, no `max_model_len`).
 */
export function modelsHandler(ctx: SimulatorContext) {
  return (_req: Request, res: Response): void => {
    const created = unixSeconds();
    const { models, maxModelLen } = ctx.config;
    const card = (id: string, root: string, parent: string | null, maxLen: number | null) => ({
      id,
      object: "model",
      created,
      owned_by: "vllm",
      root,
      parent,
      max_model_len: maxLen,
      permission: [
        {
          id: `modelperm-${id}`,
          object: "model_permission",
          created,
          allow_create_engine: false,
          allow_sampling: true,
          allow_logprobs: true,
          allow_search_indices: false,
          allow_view: true,
          allow_fine_tuning: false,
          organization: "*",
          group: null,
          is_blocking: false,
        },
      ],
    });
    res.json({
      object: "list",
      data: [
        ...models.map((id) => card(id, models[0] as string, null, maxModelLen)),
        ...ctx.adapters.list().map((adapter) => card(adapter.name, adapter.path, adapter.parent, null)),
      ],
    });
  };
}
