import { badRequest } from "./errors";
import { jsonInstance, UnsupportedSchemaError } from "./json-instance";
import type { Prng } from "./prng";
import type { ResponseFormat } from "./requests/chat-request";
import { generateTextPieces } from "./text-generator";

/**
 * What a model under vLLM's structured outputs writes for a `response_format`: for `json_object` a small JSON object
 * (its text from the text generator), for `json_schema` an instance of the schema. Null for `text` (free text).
 * A schema the instance generator cannot honour is a 400, as vLLM refuses a schema its grammar backend cannot compile.
 */
export function structuredOutputText(format: ResponseFormat | null | undefined, prng: Prng): string | null {
  if (format == null || format.type === "text") return null;
  const schema = format.type === "json_schema" ? format.json_schema?.schema : undefined;
  if (schema == null) return JSON.stringify({ answer: generateTextPieces(prng, prng.int(5, 20)).join("") });
  try {
    return JSON.stringify(jsonInstance(schema, prng));
  } catch (err) {
    if (err instanceof UnsupportedSchemaError) throw badRequest(`The JSON schema in response_format cannot be used: ${err.message}.`, "response_format");
    throw err;
  }
}
