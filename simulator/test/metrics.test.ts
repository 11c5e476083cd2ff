import type { RunningSimulator } from "../src";
import { chat, fastSim, longText, metricValue, NO_LATENCY, scrape } from "./helpers";

const NAMES = [
  "vllm:num_requests_running",
  "vllm:num_requests_waiting",
  "vllm:kv_cache_usage_perc",
  "vllm:prompt_tokens_total",
  "vllm:generation_tokens_total",
  "vllm:request_success_total",
  "vllm:prefix_cache_queries_total",
  "vllm:prefix_cache_hits_total",
  "vllm:time_to_first_token_seconds_count",
  "vllm:inter_token_latency_seconds_count",
  "vllm:e2e_request_latency_seconds_count",
  "vllm:request_queue_time_seconds_count",
];

describe("/metrics", () => {
  let sim: RunningSimulator;
  let other: RunningSimulator;
  beforeAll(async () => {
    sim = await fastSim({ models: ["metered", "metered-alias"] });
    other = await fastSim({ models: ["metered"] });
  });
  afterAll(async () => {
    await Promise.all([sim.close(), other.close()]);
  });

  test("exposes vLLM's metric names, labelled with the primary model name", async () => {
    const res = await fetch(`${sim.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const name of NAMES) expect(metricValue(text, name, { model_name: "metered" })).toBeDefined();
    expect(metricValue(text, "vllm:cache_config_info", { block_size: "16", enable_prefix_caching: "true" })).toBe(1);
  });

  test("counters and histograms move with each request, on this instance only", async () => {
    const res = await chat(sim, { model: "metered-alias", max_tokens: 7, temperature: 0 });
    const text = await scrape(sim);
    const labels = { model_name: "metered" };
    expect(metricValue(text, "vllm:prompt_tokens_total", labels)).toBe(res.body.usage.prompt_tokens);
    expect(metricValue(text, "vllm:generation_tokens_total", labels)).toBe(7);
    expect(metricValue(text, "vllm:request_success_total", { ...labels, finished_reason: "length" })).toBe(1);
    expect(metricValue(text, "vllm:request_success_total", { ...labels, finished_reason: "stop" })).toBe(0);
    expect(metricValue(text, "vllm:time_to_first_token_seconds_count", labels)).toBe(1);
    expect(metricValue(text, "vllm:inter_token_latency_seconds_count", labels)).toBe(6);
    expect(metricValue(text, "vllm:e2e_request_latency_seconds_count", labels)).toBe(1);
    expect(metricValue(text, "vllm:request_queue_time_seconds_count", labels)).toBe(1);
    expect(metricValue(text, "vllm:prefix_cache_queries_total", labels)).toBe(res.body.usage.prompt_tokens);

    await chat(sim, { max_tokens: 500, messages: [{ role: "user", content: "x" }] }).then((r) => expect(r.body.choices[0].finish_reason).toBe("stop"));
    expect(metricValue(await scrape(sim), "vllm:request_success_total", { ...labels, finished_reason: "stop" })).toBe(1);

    // Each simulator has its own registry.
    const untouched = await scrape(other);
    expect(metricValue(untouched, "vllm:prompt_tokens_total", labels)).toBe(0);
    expect(metricValue(untouched, "vllm:request_success_total", { ...labels, finished_reason: "length" })).toBe(0);
  });
});

describe("prefix cache", () => {
  const system = { role: "system", content: longText(200) };

  test("a repeated long prompt reuses its cached blocks: hits counted in stats and metrics", async () => {
    const sim = await fastSim({ prefixCache: { blockSize: 16 } });
    try {
      const first = await chat(sim, { messages: [system, { role: "user", content: "question one" }], max_tokens: 2 });
      expect(sim.stats().prefixCacheHitTokens).toBe(0);
      const promptTokens: number = first.body.usage.prompt_tokens;
      await chat(sim, { messages: [system, { role: "user", content: "question one" }], max_tokens: 2 });
      // Every full block is reused, except that the last prompt token is always recomputed.
      const fullBlocks = Math.floor(promptTokens / 16);
      const expectedHits = (fullBlocks * 16 === promptTokens ? fullBlocks - 1 : fullBlocks) * 16;
      const stats = sim.stats();
      expect(stats.prefixCacheHitTokens).toBe(expectedHits);
      expect(stats.prefixCacheHitTokens).toBeGreaterThan(promptTokens * 0.9);
      expect(stats.prefixCacheQueryTokens).toBe(2 * promptTokens);
      const text = await scrape(sim);
      expect(metricValue(text, "vllm:prefix_cache_hits_total")).toBe(expectedHits);
      expect(metricValue(text, "vllm:prefix_cache_queries_total")).toBe(2 * promptTokens);
    } finally {
      await sim.close();
    }
  });

  test("a shared prefix hits partially; a different first token breaks the hash chain", async () => {
    const sim = await fastSim();
    try {
      await chat(sim, { messages: [system, { role: "user", content: "question one" }], max_tokens: 1 });
      const before = sim.stats().prefixCacheHitTokens;
      const sameSystem = await chat(sim, { messages: [system, { role: "user", content: longText(100, "other") }], max_tokens: 1 });
      const partial = sim.stats().prefixCacheHitTokens - before;
      expect(partial).toBeGreaterThanOrEqual(192); // the 200-token system message's full blocks
      expect(partial).toBeLessThan(sameSystem.body.usage.prompt_tokens - 90);
      const afterPartial = sim.stats().prefixCacheHitTokens;
      // Same words, but a different first message role changes the first block, so nothing after it matches.
      await chat(sim, { messages: [{ role: "user", content: system.content }, { role: "user", content: "question one" }], max_tokens: 1 });
      expect(sim.stats().prefixCacheHitTokens).toBe(afterPartial);
    } finally {
      await sim.close();
    }
  });

  test("a request arriving while another computes the same prefix reuses it instead of computing it again (vLLM v1)", async () => {
    // Prefill of the 200-token prompt takes ~1 s: the second request arrives well inside it.
    const sim = await fastSim({ latency: { ...NO_LATENCY, prefillTimePerTokenMs: 5 } });
    try {
      const first = chat(sim, { messages: [system], max_tokens: 1 });
      await new Promise((r) => setTimeout(r, 100));
      const second = await chat(sim, { messages: [system], max_tokens: 1 });
      await first;
      const promptTokens: number = second.body.usage.prompt_tokens;
      expect(sim.stats().prefixCacheHitTokens).toBe((Math.ceil(promptTokens / 16) - 1) * 16);
    } finally {
      await sim.close();
    }
  });

  test("LRU eviction: a cache too small for the prompt keeps only its tail, so the prefix misses", async () => {
    const sim = await fastSim({ prefixCache: { capacityBlocks: 2 } });
    try {
      await chat(sim, { messages: [system], max_tokens: 1 });
      await chat(sim, { messages: [system], max_tokens: 1 });
      expect(sim.stats().prefixCacheHitTokens).toBe(0);
    } finally {
      await sim.close();
    }
  });

  test("disabled prefix caching never hits nor counts queries", async () => {
    const sim = await fastSim({ prefixCache: { enabled: false } });
    try {
      await chat(sim, { messages: [system], max_tokens: 1 });
      await chat(sim, { messages: [system], max_tokens: 1 });
      expect(sim.stats()).toMatchObject({ prefixCacheHitTokens: 0, prefixCacheQueryTokens: 0 });
      expect(metricValue(await scrape(sim), "vllm:cache_config_info", { enable_prefix_caching: "false" })).toBe(1);
    } finally {
      await sim.close();
    }
  });
});
