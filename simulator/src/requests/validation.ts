import type { z } from "zod";
import { badRequest, type VllmError } from "../errors";

/**
 * vLLM answers pydantic validation failures with 400 (not FastAPI's 422) and names the offending field
 * in `param`; this does the same for zod issues.
 */
export function validationError(error: z.ZodError): VllmError {
  const issues = error.issues;
  const first = issues[0];
  const param = first && first.path.length > 0 ? first.path.map(String).join(".") : null;
  const message = issues
    // Custom (range) issues already carry vLLM's full sentence; type issues need the field named.
    .map((issue) => (issue.path.length > 0 && issue.code !== "custom" ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message))
    .join("; ");
  return badRequest(message || "Invalid request", param);
}

/** Parses with a schema, turning failures into a vLLM-shaped 400. */
export function parseRequest<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (!result.success) throw validationError(result.error);
  return result.data;
}
