import { z } from "zod";

/** The embeddings request (OpenAI's four `input` forms plus vLLM's extras, which are accepted and ignored). */
export const EmbeddingsRequestSchema = z.looseObject({
  model: z.string().nullish(),
  input: z.union([
    z.string(),
    z.array(z.string()),
    z.array(z.number().int().nonnegative()),
    z.array(z.array(z.number().int().nonnegative())),
  ]),
  encoding_format: z.enum(["float", "base64"]).nullish(),
  dimensions: z.number().int().nullish(),
  user: z.string().nullish(),
});

export type EmbeddingsRequest = z.infer<typeof EmbeddingsRequestSchema>;

/** One embedding input: text, or pre-tokenized ids. */
export type EmbeddingInput = { kind: "text"; text: string } | { kind: "ids"; ids: number[] };

/** Normalizes the four `input` forms into a list, in request order. */
export function embeddingInputs(input: EmbeddingsRequest["input"]): EmbeddingInput[] {
  if (typeof input === "string") return [{ kind: "text", text: input }];
  if (input.length === 0) return [];
  const first = input[0];
  if (typeof first === "string") return (input as string[]).map((text) => ({ kind: "text", text }));
  if (typeof first === "number") return [{ kind: "ids", ids: input as number[] }];
  return (input as number[][]).map((ids) => ({ kind: "ids", ids }));
}
