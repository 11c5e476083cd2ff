import { createParser, type EventSourceMessage } from "eventsource-parser";
import OpenAI from "openai";
import { type RunningSimulator, type SimulatorConfigInput, startSimulator } from "../src";

/** Test helpers: simulators with near-zero latency, JSON/SSE over real HTTP, metric lookup. */

export const NO_LATENCY = { timeToFirstTokenMs: 0, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 };

export function fastSim(config: SimulatorConfigInput = {}): Promise<RunningSimulator> {
  return startSimulator({ latency: NO_LATENCY, ...config });
}

export function openaiClient(sim: RunningSimulator): OpenAI {
  return new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
}

// The bodies are whatever the server sent; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Json;
}

export async function postJson(
  sim: RunningSimulator,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<JsonResponse> {
  const res = await fetch(`${sim.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.length > 0 ? JSON.parse(text) : undefined };
}

export function chat(sim: RunningSimulator, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return postJson(sim, "/v1/chat/completions", { messages: [{ role: "user", content: "Hello there" }], ...body }, headers);
}

/** Opens a streaming chat request and returns the raw response (body unread). */
export function openStream(
  sim: RunningSimulator,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${sim.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ messages: [{ role: "user", content: "Hello there" }], stream: true, ...body }),
    signal,
  });
}

/** Every SSE event of a response, parsed by eventsource-parser. Rejects if the connection breaks. */
export async function readEvents(res: Response, onEvent?: (ev: EventSourceMessage) => void): Promise<EventSourceMessage[]> {
  if (!res.body) throw new Error("no body");
  const events: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (ev) => {
      events.push(ev);
      onEvent?.(ev);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of res.body) parser.feed(decoder.decode(bytes, { stream: true }));
  return events;
}

/** The JSON payloads of a stream's events, excluding the final [DONE]. */
export function chunksOf(events: EventSourceMessage[]): Json[] {
  return events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data));
}

export async function scrape(sim: RunningSimulator): Promise<string> {
  const res = await fetch(`${sim.url}/metrics`);
  return res.text();
}

/** Value of one sample in Prometheus text format, matching all given labels; undefined when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([^{\s]+)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const sampleLabels = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => sampleLabels[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/** Polls until the predicate holds (state changes on the server side after the client sees the effect). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function l2norm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] ?? 0) ** 2;
  return Math.sqrt(sum);
}

/** A prompt of roughly n tokens (one word each). */
export function longText(n: number, word = "alpha"): string {
  return Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");
}
