import type { Request, Response } from "express";
import type { SimulatorConfig } from "../config";
import { unixSeconds } from "./context";

/** GET /v1/models in vLLM's ModelCard shape (one card per served name; `created` is request time, as in vLLM). */
export function modelsHandler(config: SimulatorConfig) {
  return (_req: Request, res: Response): void => {
    const created = unixSeconds();
    const primary = config.models[0] as string;
    res.json({
      object: "list",
      data: config.models.map((id) => ({
        id,
        object: "model",
        created,
        owned_by: "vllm",
        root: primary,
        parent: null,
        max_model_len: config.maxModelLen,
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
      })),
    });
  };
}
