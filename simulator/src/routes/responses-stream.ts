import type { Response } from "express";
import { outputItems, type PlannedItem, type ResponseObject } from "../response-object";
import { setStreamErrorWriter, writeNamedEvent } from "./sse";

/**
 * The Responses event stream as vLLM sends it: each event named by its `type` and numbered by
 * `sequence_number` from 0. `response.created` and `response.in_progress` open it; the output item is
 * announced with its first token (`response.output_item.added`, then `response.content_part.added` for text),
 * each token is one delta (`response.output_text.delta`, or `response.function_call_arguments.delta`), the
 * item is closed by its done events, and `response.completed` carries the final response. There is no
 * `[DONE]`.
 */
export class ResponseEventStream {
  private sequence = 0;

  constructor(
    private readonly res: Response,
    private readonly item: PlannedItem,
  ) {
    // An engine failure after the 200 is the Responses API's `error` event (OpenAI's shape): vLLM's own attempt
    // to send its error body as an event fails validation and cuts the stream.
    setStreamErrorWriter(res, (error) => this.emit("error", { code: "server_error", message: error.message, param: error.param }));
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    writeNamedEvent(this.res, type, { type, sequence_number: this.sequence++, ...fields });
  }

  /** The opening pair, sent with the headers, before queueing and prefill. */
  open(initial: ResponseObject): void {
    this.emit("response.created", { response: initial });
    this.emit("response.in_progress", { response: initial });
  }

  /** Token i of the plan: the item's opening events with the first token, then one delta per token. */
  token(i: number): void {
    const { plan, itemId } = this.item;
    const at = { output_index: 0, item_id: itemId };
    if (plan.mode === "text") {
      if (i === 0) {
        this.emit("response.output_item.added", { output_index: 0, item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] } });
        this.emit("response.content_part.added", { ...at, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      }
      this.emit("response.output_text.delta", { ...at, content_index: 0, delta: plan.pieces[i] ?? "", logprobs: [] });
      return;
    }
    // Token 0 of a tool call is its name: the item is announced with empty arguments, each later token is a fragment.
    if (i === 0) {
      this.emit("response.output_item.added", {
        output_index: 0,
        item: { id: itemId, type: "function_call", call_id: plan.id, name: plan.name, arguments: "", status: "in_progress" },
      });
      return;
    }
    this.emit("response.function_call_arguments.delta", { ...at, delta: plan.argumentPieces[i - 1] ?? "" });
  }

  /** Closes the item (if any token was produced) and sends `response.completed` with the final response. */
  complete(final: ResponseObject): void {
    const [item] = outputItems(this.item);
    const at = { output_index: 0, item_id: this.item.itemId };
    if (item?.type === "message") {
      const part = item.content[0];
      this.emit("response.output_text.done", { ...at, content_index: 0, text: part?.text ?? "", logprobs: [] });
      this.emit("response.content_part.done", { ...at, content_index: 0, part });
      this.emit("response.output_item.done", { output_index: 0, item });
    } else if (item?.type === "function_call") {
      this.emit("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments });
      this.emit("response.output_item.done", { output_index: 0, item });
    }
    this.emit("response.completed", { response: final });
  }
}
