/**
 * Where OpenAI's published OpenAPI document is stricter than OpenAI's own answers: each place is relaxed here, and
 * only here, before the document is compiled, with the evidence that OpenAI answers that way. An answer of the gateway
 * that a strict client cannot read and OpenAI would not send is not an exception: the gateway normalizes it.
 */

/** A relaxation of one schema of the document, by JSON pointer into the published file. */
export interface KnownException {
  /** JSON pointer (RFC 6901) into the published document, at the schema relaxed. */
  pointer: string;
  /** What is allowed besides what the document says. */
  allows: "null" | "string";
  /** What OpenAI answers there, and where that is shown. */
  evidence: string;
}

const DOC = "the published document's own example";

export const KNOWN_EXCEPTIONS: readonly KnownException[] = [
  {
    pointer: "/components/schemas/CreateChatCompletionResponse/properties/system_fingerprint",
    allows: "null",
    evidence: `${DOC} answer of POST /chat/completions ("Logprobs") has "system_fingerprint": null.`,
  },
  {
    pointer: "/components/schemas/ChatCompletionResponseMessage/properties/function_call",
    allows: "null",
    evidence: `${DOC} answers of GET /chat/completions/{completion_id} and GET /chat/completions hold messages with "function_call": null; openai-node types ChatCompletionMessage.function_call as FunctionCall | null.`,
  },
  {
    pointer: "/components/schemas/CreateCompletionResponse/properties/choices/items/properties/finish_reason",
    allows: "null",
    evidence: `The document gives no stream schema for POST /completions; its "Streaming" example chunks are this object with "finish_reason": null.`,
  },
  {
    pointer: "/components/schemas/Embedding/properties/embedding",
    allows: "string",
    evidence: "With encoding_format \"base64\" (an enum value of CreateEmbeddingRequest) the vector is a base64 string: openai-node asks for base64 by default and types that answer as Base64EmbeddingResponse, embedding: string (src/lib/embeddings.ts).",
  },
  {
    pointer: "/components/schemas/ModelResponseProperties/properties/user",
    allows: "null",
    evidence: `${DOC} answer of POST /responses ("Text input") and the ResponseCreatedEvent example have "user": null.`,
  },
  {
    pointer: "/components/schemas/Response/allOf/2/properties/usage",
    allows: "null",
    evidence: `${DOC}s of ResponseCreatedEvent and of POST /responses/{response_id}/cancel have "usage": null (a response not finished yet).`,
  },
];

type Node = Record<string, unknown>;

function resolve(doc: Node, pointer: string): { parent: Node; key: string } {
  const keys = pointer.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
  const key = keys.pop()!;
  let parent: unknown = doc;
  for (const k of keys) parent = (parent as Node | undefined)?.[k];
  if (!parent || typeof parent !== "object" || !(key in parent)) throw new Error(`known exception: the document has nothing at ${pointer}`);
  return { parent: parent as Node, key };
}

/** Rewrites the parsed document in memory; a pointer that no longer exists fails loudly (the document changed). */
export function applyExceptions(doc: Node): void {
  for (const e of KNOWN_EXCEPTIONS) {
    const { parent, key } = resolve(doc, e.pointer);
    parent[key] = { anyOf: [parent[key], { type: e.allows }] };
  }
}
