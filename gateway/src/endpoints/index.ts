import { chatCompletions } from "./chat-completions";
import { completions } from "./completions";
import { embeddings } from "./embeddings";
import { responses } from "./responses";
import type { EndpointSpec } from "./spec";

/** Every inference endpoint the gateway serves, each routed at its exact path. */
export const ENDPOINTS: readonly EndpointSpec[] = [chatCompletions as EndpointSpec, embeddings as EndpointSpec, completions as EndpointSpec, responses as EndpointSpec];
