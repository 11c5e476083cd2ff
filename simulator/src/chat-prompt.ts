import type { ChatMessage, ChatTool } from "./requests/chat-request";

/**
 * Renders messages the way a chat template does (role markers, tool definitions up front), so prompt
 * token counts include per-message overhead and identical conversation prefixes share cache blocks.
 */

function contentText(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    // Non-text parts (images, audio) stand in as one placeholder each, like a multimodal template.
    return content.map((part) => (typeof part.text === "string" ? part.text : `<${part.type}>`)).join("\n");
  }
  return "";
}

export function renderChatPrompt(messages: readonly ChatMessage[], tools: readonly ChatTool[] | null | undefined): string {
  let prompt = "";
  if (tools && tools.length > 0) prompt += `<|system|>\n# Tools\n${JSON.stringify(tools.map((t) => t.function))}\n`;
  for (const message of messages) {
    prompt += `<|${message.role}|>\n${contentText(message)}`;
    if (message.tool_calls && message.tool_calls.length > 0) prompt += `\n${JSON.stringify(message.tool_calls)}`;
    prompt += "\n";
  }
  return `${prompt}<|assistant|>\n`;
}
