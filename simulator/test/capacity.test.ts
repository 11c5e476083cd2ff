import { chat, chunksOf, fastSim, metricValue, openStream, postJson, readEvents, scrape, waitFor } from "./helpers";

/** Scheduler behaviour seen from outside: bounded running set, FIFO queue, cancellation frees slots, the 429 fault. */
describe("capacity and cancellation", () => {
  test("a full engine queues, as vLLM does: nothing is refused, the waiting gauge rises, every request is answered", async () => {
    const sim = await fastSim({ maxNumSeqs: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 20, prefillTimePerTokenMs: 0 } });
    try {
      // A long first request (ignore_eos: it runs to max_tokens, 20 s; aborted below) keeps the only slot busy
      // however slow the machine is.
      const controller = new AbortController();
      const first = postJson(sim, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 1000, ignore_eos: true }, {}, controller.signal).catch(
        (e: unknown) => e,
      );
      await waitFor(() => sim.stats().running === 1);
      // Far more than the old default bound of 64 waiting requests.
      const queued = Array.from({ length: 80 }, () => chat(sim, { max_tokens: 1 }));
      // Eighty connections to open and parse: slow on a loaded machine, never a refusal.
      await waitFor(() => sim.stats().waiting === 80, 20_000);
      const metrics = await scrape(sim);
      expect(metricValue(metrics, "vllm:num_requests_running")).toBe(1);
      expect(metricValue(metrics, "vllm:num_requests_waiting")).toBe(80);
      expect(metricValue(metrics, "vllm:kv_cache_usage_perc")).toBeGreaterThan(0);

      controller.abort();
      expect(await first).toMatchObject({ name: "AbortError" });
      expect((await Promise.all(queued)).map((r) => r.status)).toEqual(Array(80).fill(200));
      expect(sim.stats()).toMatchObject({ running: 0, waiting: 0, completedTotal: 80, cancelledTotal: 1, rejectedTotal: 0 });
      expect(metricValue(await scrape(sim), "vllm:num_requests_waiting")).toBe(0);
    } finally {
      await sim.close();
    }
  });

  test("the bounded-queue fault: running + waiting full -> 429 in vLLM's envelope, before a stream starts", async () => {
    const sim = await fastSim({ maxNumSeqs: 1, maxWaitingQueueLength: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 20, prefillTimePerTokenMs: 0 } });
    try {
      const controller = new AbortController();
      const first = postJson(sim, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], max_tokens: 1000, ignore_eos: true }, {}, controller.signal).catch(
        (e: unknown) => e,
      );
      await waitFor(() => sim.stats().running === 1);
      const second = chat(sim, { max_tokens: 2 });
      await waitFor(() => sim.stats().waiting === 1);

      const third = await chat(sim, { max_tokens: 2 });
      expect(third.status).toBe(429);
      expect(third.body.error).toMatchObject({ code: 429, param: null });
      expect(typeof third.body.error.type).toBe("string");
      const streamed = await postJson(sim, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }], stream: true });
      expect(streamed.status).toBe(429);
      expect(sim.stats().rejectedTotal).toBe(2);

      // The queued request runs once the slot frees up.
      controller.abort();
      expect(await first).toMatchObject({ name: "AbortError" });
      expect((await second).status).toBe(200);
      expect(sim.stats()).toMatchObject({ running: 0, waiting: 0, completedTotal: 1, cancelledTotal: 1 });
      expect(metricValue(await scrape(sim), "vllm:kv_cache_usage_perc")).toBe(0);
    } finally {
      await sim.close();
    }
  });

  test("waiting requests are served in arrival order", async () => {
    const sim = await fastSim({ maxNumSeqs: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 2, prefillTimePerTokenMs: 0 } });
    try {
      const order: number[] = [];
      const requests: Promise<void>[] = [];
      for (let i = 0; i < 4; i++) {
        requests.push(chat(sim, { max_tokens: 20 }).then(() => void order.push(i)));
        // Each request is queued (or running) before the next is sent, so arrival order is certain.
        await waitFor(() => sim.stats().requestsTotal === i + 1);
      }
      await Promise.all(requests);
      expect(order).toEqual([0, 1, 2, 3]);
    } finally {
      await sim.close();
    }
  });

  test("a client aborting a stream stops generation, frees the slot and counts as cancelled", async () => {
    const sim = await fastSim({ maxNumSeqs: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 10, prefillTimePerTokenMs: 0 } });
    try {
      const controller = new AbortController();
      const res = await openStream(sim, { max_tokens: 500 }, {}, controller.signal);
      let seen = 0;
      await expect(
        readEvents(res, () => {
          if (++seen === 3) controller.abort();
        }),
      ).rejects.toThrow();
      await waitFor(() => sim.stats().cancelledTotal === 1);
      expect(sim.stats()).toMatchObject({ running: 0, completedTotal: 0 });
      const metrics = await scrape(sim);
      expect(metricValue(metrics, "vllm:request_success_total", { finished_reason: "abort" })).toBe(1);
      // Generation really stopped: far fewer than 500 tokens were produced.
      expect(metricValue(metrics, "vllm:generation_tokens_total")).toBeLessThan(50);
      // The single slot is free again.
      const next = chunksOf(await readEvents(await openStream(sim, { max_tokens: 2 })));
      expect(next[next.length - 1].choices[0].finish_reason).toBe("length");
    } finally {
      await sim.close();
    }
  });

  test("a client giving up while queued leaves the queue and counts as cancelled", async () => {
    const sim = await fastSim({ maxNumSeqs: 1, latency: { timeToFirstTokenMs: 0, interTokenLatencyMs: 10, prefillTimePerTokenMs: 0 } });
    try {
      const running = chat(sim, { max_tokens: 15 });
      await waitFor(() => sim.stats().running === 1);
      const controller = new AbortController();
      const queued = fetch(`${sim.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
        signal: controller.signal,
      });
      await waitFor(() => sim.stats().waiting === 1);
      controller.abort();
      await expect(queued).rejects.toThrow();
      await waitFor(() => sim.stats().cancelledTotal === 1);
      expect(sim.stats().waiting).toBe(0);
      expect((await running).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});
