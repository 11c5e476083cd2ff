import { STATUS_CODES } from "node:http";

/**
 * vLLM v0.10.1+ error envelope: `{"error":{"message","type","param","code"}}` with `code` the INTEGER
 * HTTP status (vLLM's `ErrorInfo.code: int`), unlike OpenAI's string-or-null. The gateway must normalize it.
 */

export interface VllmErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

/** vLLM's own exception-derived types; other statuses get the HTTP phrase, as vLLM's HTTPException handler does. */
const VLLM_ERROR_TYPES: Record<number, string> = {
  400: "BadRequestError",
  404: "NotFoundError",
  500: "InternalServerError",
  501: "NotImplementedError",
};

export function errorTypeForStatus(status: number): string {
  return VLLM_ERROR_TYPES[status] ?? STATUS_CODES[status] ?? "Error";
}

/** An error that already knows its HTTP status and vLLM-shaped body. */
export class VllmError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type: string = errorTypeForStatus(status),
  ) {
    super(message);
    this.name = "VllmError";
  }

  toBody(): VllmErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

export const badRequest = (message: string, param: string | null = null): VllmError => new VllmError(400, message, param);

export const modelNotFound = (model: string): VllmError =>
  new VllmError(404, `The model \`${model}\` does not exist.`, "model");

/** Messages for injected failures, modelled on what the real component would say for that status. */
const INJECTED_MESSAGES: Record<number, string> = {
  400: "Invalid request (injected failure).",
  401: "Incorrect API key provided.",
  403: "Permission denied (injected failure).",
  404: "The model `injected-failure` does not exist.",
  408: "Request timed out (injected failure).",
  429: "Rate limit reached (injected failure). Please try again later.",
  500: "Internal server error (injected failure).",
  502: "Bad gateway (injected failure).",
  503: "The server is overloaded or not ready yet (injected failure).",
  504: "Gateway timeout (injected failure).",
};

export function injectedError(status: number): VllmError {
  return new VllmError(status, INJECTED_MESSAGES[status] ?? `Injected failure with status ${status}.`);
}
