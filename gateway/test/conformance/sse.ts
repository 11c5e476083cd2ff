import { createParser, type EventSourceMessage } from "eventsource-parser";

/** Every server-sent event of a whole answer, in order (`event` undefined where the stream names none). */
export async function readEvents(res: Response): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  parser.feed(await res.text());
  return events;
}

/** The JSON payloads of a chat or completions stream, which must end with `data: [DONE]` and hold nothing after it. */
export function streamChunks(events: EventSourceMessage[]): unknown[] {
  const data = events.map((e) => e.data);
  if (data.at(-1) !== "[DONE]") throw new Error(`the stream does not end with [DONE]: ${data.at(-1)?.slice(0, 200)}`);
  return data.slice(0, -1).map((d) => JSON.parse(d) as unknown);
}
