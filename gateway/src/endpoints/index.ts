import { chatCompletions } from "./chat-completions";
import { embeddings } from "./embeddings";
import type { EndpointSpec } from "./spec";

/** Every inference endpoint the gateway serves, each routed at its exact path. */
export const ENDPOINTS: readonly EndpointSpec[] = [chatCompletions as EndpointSpec, embeddings as EndpointSpec];
