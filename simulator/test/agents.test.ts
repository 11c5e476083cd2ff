import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";
import type { RunningSimulator } from "../src";
import { fastSim, openaiClient } from "./helpers";

/**
 * The OpenAI Agents SDK in its default mode (the Responses API), straight against the simulator: the model
 * calls the tool, the SDK runs it and sends the result back, and the model answers.
 */

setTracingDisabled(true); // traces would otherwise be exported to OpenAI's platform

describe("OpenAI Agents SDK over /v1/responses", () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["agent-model"], toolCalling: true });
  });
  afterAll(async () => {
    await sim.close();
  });

  const calls: string[] = [];
  const tideTable = tool({
    name: "tide_table",
    description: "High and low tide times for a harbour",
    parameters: z.object({ harbour: z.string() }),
    execute: async ({ harbour }) => {
      calls.push(harbour);
      return `${harbour}: high water 06:12, low water 12:25`;
    },
  });

  function runner(): Runner {
    // useResponses is the SDK's default; said here so the test cannot silently fall back to chat completions.
    return new Runner({ modelProvider: new OpenAIProvider({ openAIClient: openaiClient(sim), useResponses: true }), tracingDisabled: true });
  }

  const agent = new Agent({ name: "Harbour master", instructions: "Answer questions about tides; use the tide table.", model: "agent-model", tools: [tideTable] });

  test("a tool call, its result and an answer", async () => {
    calls.length = 0;
    const before = sim.stats().requestsTotal;
    const result = await runner().run(agent, "When is high water in Brest?");
    expect(result.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
    expect(calls).toHaveLength(1);
    expect(typeof result.finalOutput).toBe("string");
    expect((result.finalOutput as string).length).toBeGreaterThan(0);
    // Two model calls, both on /v1/responses, the second carrying the tool's output.
    expect(sim.stats().requestsTotal - before).toBe(2);
    expect(sim.stats().lastRequestBody).toMatchObject({ model: "agent-model", instructions: expect.any(String) });
    expect(JSON.stringify(sim.stats().lastRequestBody)).toContain("function_call_output");
  });

  // vLLM's usage details carry per-turn lists (`input_tokens_per_turn`, …) beside the counts; the SDK's streamed
  // run validates every detail as a number and throws. Pinned here: the gateway must drop those lists (or the SDK
  // relax its schema) before streamed agent runs work against vLLM.
  test("a streamed run is refused by the SDK over vLLM's per-turn usage lists", async () => {
    const result = await runner().run(agent, "When is high water in Brest?", { stream: true });
    const drain = async (): Promise<void> => {
      for await (const event of result.toStream()) void event;
      await result.completed;
    };
    await expect(drain()).rejects.toThrow(/input_tokens_per_turn/);
  });

  test("continuing from the stored response with previousResponseId", async () => {
    const first = await runner().run(agent, "Tides in Brest?");
    expect(first.lastResponseId).toMatch(/^resp_/);
    const second = await runner().run(agent, "And in Cherbourg?", { previousResponseId: first.lastResponseId });
    expect(sim.stats().lastRequestBody).toMatchObject({ previous_response_id: expect.stringMatching(/^resp_/) });
    expect(second.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
  });
});
