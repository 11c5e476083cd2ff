import { APIError } from "openai";
import { chat, chunksOf, fastSim, openaiClient, openStream, readEvents, waitFor } from "./helpers";

describe("fault injection", () => {
  test("X-Return-Error forces that status in vLLM's envelope", async () => {
    const sim = await fastSim();
    try {
      const unavailable = await chat(sim, {}, { "X-Return-Error": "503" });
      expect(unavailable.status).toBe(503);
      expect(unavailable.body.error).toMatchObject({ type: "Service Unavailable", param: null, code: 503 });
      const internal = await chat(sim, {}, { "X-Return-Error": "500" });
      expect(internal.body.error).toMatchObject({ type: "InternalServerError", code: 500 });
      expect(sim.stats().failedTotal).toBe(2);
      const error = await openaiClient(sim)
        .chat.completions.create({ model: "sim-model", messages: [{ role: "user", content: "x" }] }, { headers: { "X-Return-Error": "429" } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(429);
      // Without the header the same server answers normally.
      expect((await chat(sim, {})).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  test("failureRate 1 fails every inference request with failureStatus; health and models stay up", async () => {
    const sim = await fastSim({ failureRate: 1, failureStatus: 503 });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await chat(sim, {});
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe(503);
      }
      expect(sim.stats()).toMatchObject({ failedTotal: 3, completedTotal: 0 });
      expect((await fetch(`${sim.url}/health`)).status).toBe(200);
      expect((await fetch(`${sim.url}/v1/models`)).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  test("X-Drop-After-Tokens cuts the connection after N content chunks, without [DONE]", async () => {
    const sim = await fastSim({ latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 1, prefillTimePerTokenMs: 0 } });
    try {
      const res = await openStream(sim, { max_tokens: 20 }, { "X-Drop-After-Tokens": "3" });
      const received: string[] = [];
      await expect(readEvents(res, (ev) => received.push(ev.data))).rejects.toThrow();
      const chunks = chunksOf(received.map((data) => ({ data, event: undefined, id: undefined })));
      expect(received).not.toContain("[DONE]");
      expect(chunks.filter((c) => typeof c.choices[0]?.delta.content === "string" && c.choices[0].delta.content !== "")).toHaveLength(3);
      await waitFor(() => sim.stats().failedTotal === 1);
      expect(sim.stats()).toMatchObject({ cancelledTotal: 0, running: 0 });
      // Only that request: the next stream completes.
      const ok = await readEvents(await openStream(sim, { max_tokens: 5 }));
      expect(ok[ok.length - 1]?.data).toBe("[DONE]");
    } finally {
      await sim.close();
    }
  });

  test("X-Stream-Error-After-Tokens sends vLLM's in-band error event then [DONE]; non-streaming gets a 500", async () => {
    const sim = await fastSim();
    try {
      const events = await readEvents(await openStream(sim, { max_tokens: 20 }, { "X-Stream-Error-After-Tokens": "2" }));
      expect(events.map((e) => e.data).slice(-1)).toEqual(["[DONE]"]);
      const chunks = chunksOf(events);
      expect(chunks[chunks.length - 1]).toEqual({
        error: { message: expect.any(String), type: "InternalServerError", param: null, code: 500 },
      });
      expect(chunks.filter((c) => c.choices?.[0]?.delta.content)).toHaveLength(2);
      // The openai SDK turns the in-band error into an exception.
      const stream = await openaiClient(sim).chat.completions.create(
        { model: "sim-model", messages: [{ role: "user", content: "x" }], stream: true },
        { headers: { "X-Stream-Error-After-Tokens": "1" } },
      );
      await expect(
        (async () => {
          for await (const _part of stream) void _part;
        })(),
      ).rejects.toThrow(/Simulated engine failure/);
      const plain = await chat(sim, {}, { "X-Stream-Error-After-Tokens": "0" });
      expect(plain.status).toBe(500);
      expect(plain.body.error.type).toBe("InternalServerError");
      expect(sim.stats()).toMatchObject({ failedTotal: 3, running: 0 });
    } finally {
      await sim.close();
    }
  });

  test("dropStreamAfterTokens drops every stream; the openai SDK sees a broken stream", async () => {
    const sim = await fastSim({ dropStreamAfterTokens: 2 });
    try {
      const stream = await openaiClient(sim).chat.completions.create({ model: "sim-model", messages: [{ role: "user", content: "x" }], max_tokens: 10, stream: true });
      let text = "";
      await expect(
        (async () => {
          for await (const part of stream) text += part.choices[0]?.delta.content ?? "";
        })(),
      ).rejects.toThrow();
      expect(text.length).toBeGreaterThan(0);
      await waitFor(() => sim.stats().failedTotal === 1);
    } finally {
      await sim.close();
    }
  });

  test("/health is 503 until startupDelayMs has passed, then 200 with an empty body", async () => {
    const sim = await fastSim({ startupDelayMs: 300 });
    try {
      const early = await fetch(`${sim.url}/health`);
      expect(early.status).toBe(503);
      // Inference is refused while loading too.
      expect((await chat(sim, {})).status).toBe(503);
      await waitFor(async () => (await fetch(`${sim.url}/health`)).status === 200);
      const ready = await fetch(`${sim.url}/health`);
      expect(await ready.text()).toBe("");
      expect((await chat(sim, {})).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  test("kill() cuts in-flight streams at once and refuses new connections", async () => {
    const sim = await fastSim({ latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 10, prefillTimePerTokenMs: 0 } });
    const res = await openStream(sim, { max_tokens: 500 });
    let seen = 0;
    const reading = readEvents(res, () => {
      if (++seen === 2) sim.kill();
    });
    await expect(reading).rejects.toThrow();
    await expect(fetch(`${sim.url}/health`)).rejects.toThrow();
    await waitFor(() => sim.stats().cancelledTotal === 1);
    expect(sim.stats().running).toBe(0);
    await sim.close(); // closing a killed simulator resolves rather than hanging
  });

  test("close() lets an in-flight stream finish, then stops listening", async () => {
    const sim = await fastSim({ latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 5, prefillTimePerTokenMs: 0 } });
    const res = await openStream(sim, { max_tokens: 20 });
    const reading = readEvents(res);
    await waitFor(() => sim.stats().running === 1);
    await sim.close();
    const events = await reading;
    expect(events[events.length - 1]?.data).toBe("[DONE]");
    expect(sim.stats().completedTotal).toBe(1);
    await expect(fetch(`${sim.url}/health`)).rejects.toThrow();
  });
});
