import type { ChatCompletionRequest, ChatMessage, ChatTool } from "./requests/chat-request";
import type { InputItem, ResponsesRequest } from "./requests/responses-request";
import type { ResponseOutputItem } from "./response-object";
import type { StoredResponse } from "./response-store";

/**
 * Turns a Responses request into the chat conversation vLLM builds from it (`construct_input_messages`):
 * the instructions as a system message, then the previous response's conversation and output when
 * `previous_response_id` is given, then the new input. The rest of the simulator (prompt rendering, the
 * planner and its tool-calling decision) then treats it as a chat request, as vLLM runs it through the chat
 * template.
 */

export function conversationOf(request: ResponsesRequest, previous: StoredResponse | undefined): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: "system", content: request.instructions });
  if (previous) {
    messages.push(...previous.messages);
    messages.push(...previous.response.output.flatMap(outputAsMessages));
  }
  if (typeof request.input === "string") messages.push({ role: "user", content: request.input });
  else messages.push(...request.input.flatMap(itemAsMessages));
  return messages;
}

/**
 * A previous answer as history. vLLM replays only its messages; its function calls are replayed here too, so
 * a `function_call_output` in the new input follows the call it answers.
 */
function outputAsMessages(item: ResponseOutputItem): ChatMessage[] {
  if (item.type === "message") return [{ role: "assistant", content: item.content.map((part) => part.text).join("") }];
  return [functionCallMessage(item.call_id, item.name, item.arguments)];
}

function itemAsMessages(item: InputItem): ChatMessage[] {
  switch (item.type ?? "message") {
    case "function_call":
      return [functionCallMessage(item.call_id ?? "", item.name ?? "", item.arguments ?? "")];
    case "function_call_output":
      return [{ role: "tool", tool_call_id: item.call_id, content: item.output ?? "" }];
    case "reasoning":
      return []; // the simulated model never reasons; replayed reasoning adds nothing to its prompt
    default:
      return [{ role: item.role ?? "user", content: item.content ?? "" }];
  }
}

function functionCallMessage(callId: string, name: string, args: string): ChatMessage {
  return { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name, arguments: args } }] };
}

/** Responses function tools are flat (`{type, name, parameters}`); chat nests them under `function`. */
export function chatTools(request: ResponsesRequest): ChatTool[] | null {
  const tools = (request.tools ?? []).filter((t) => t.type === "function" && t.name);
  if (tools.length === 0) return null;
  return tools.map((t) => ({ type: "function", function: { name: t.name as string, description: t.description, parameters: t.parameters } }));
}

/** The chat request the planner sees: same conversation, tools, limits and sampling. */
export function asChatRequest(request: ResponsesRequest, messages: ChatMessage[], maxTokens: number): ChatCompletionRequest {
  const choice = request.tool_choice;
  const tools = chatTools(request);
  return {
    messages,
    tools,
    // Without tools a tool_choice means nothing (chat would refuse it; the Responses API does not).
    tool_choice: tools === null || choice == null ? undefined : typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } },
    max_completion_tokens: maxTokens,
    temperature: request.temperature,
    seed: request.seed,
    response_format: responseFormatOf(request),
  };
}

/** `text.format` as chat's `response_format`, which vLLM turns into the same structured-output constraint. */
function responseFormatOf(request: ResponsesRequest): ChatCompletionRequest["response_format"] {
  const format = request.text?.format;
  if (format == null || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: format.name ?? "", schema: format.schema, strict: format.strict } };
}
