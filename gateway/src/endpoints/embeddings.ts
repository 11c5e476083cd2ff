import { EmbeddingRequestSchema, type EmbeddingRequest } from "../api/schemas";
import { promptText } from "../upstream/prefix-index";
import { openAiStreaming } from "./chat-completions";
import type { EndpointRequest, EndpointSpec } from "./spec";

export const embeddings: EndpointSpec<EmbeddingRequest & EndpointRequest> = {
  path: "/v1/embeddings",
  what: "embeddings",
  category: "embedder",
  schema: EmbeddingRequestSchema as EndpointSpec<EmbeddingRequest & EndpointRequest>["schema"],
  promptText: (r, maxChars) => promptText(r, maxChars),
  // Embedding servers do not stream; the conventions are the same as chat's if a client asks anyway.
  ...openAiStreaming,
};
