import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { startHarness, chatBody, type Harness } from "../support/harness";

const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;
const itWithPromtool = hasPromtool || process.env.CI ? it : it.skip;

describe("gateway metrics", () => {
  let h: Harness;
  let text: string;
  beforeAll(async () => {
    h = await startHarness([{ id: "m", sim: { latency: { timeToFirstTokenMs: 2, interTokenLatencyMs: 2, prefillTimePerTokenMs: 0 } } }, { id: "e", category: "embedder" }]);
    await h.fetch("/v1/chat/completions", { json: chatBody("m", { max_tokens: 5 }) });
    await (await h.fetch("/v1/chat/completions", { json: chatBody("m", { stream: true, max_tokens: 5 }) })).text();
    await h.fetch("/v1/embeddings", { json: { model: "e", input: "x" } });
    await h.fetch("/v1/chat/completions", { json: chatBody("made-up-model-name") });
    await h.fetch("/v1/models", { headers: { authorization: "Bearer nope" } });
    text = await (await fetch(h.gateway.metricsUrl)).text();
  });
  afterAll(() => h.close());

  it("counts requests by model, endpoint, status and key name", () => {
    expect(text).toMatch(/gateway_requests_total\{model="m",endpoint="\/v1\/chat\/completions",status="200",key="test-key"\} 2/);
    expect(text).toMatch(/gateway_requests_total\{model="e",endpoint="\/v1\/embeddings",status="200",key="test-key"\} 1/);
    expect(text).toMatch(/gateway_requests_total\{model="",endpoint="\/v1\/models",status="401",key=""\} 1/);
  });

  it("never turns a client-chosen model string into a label", () => {
    expect(text).not.toContain("made-up-model-name");
    expect(text).toMatch(/gateway_requests_total\{model="unknown",endpoint="\/v1\/chat\/completions",status="404"/);
  });

  it("records latency, time to first token, inter-token latency and tokens", () => {
    expect(text).toMatch(/gateway_request_duration_seconds_count\{model="m",endpoint="\/v1\/chat\/completions",stream="true"\} 1/);
    expect(text).toMatch(/gateway_time_to_first_token_seconds_count\{model="m"\} 1/);
    expect(text).toMatch(/gateway_inter_token_latency_seconds_count\{model="m"\} [1-9]/);
    expect(text).toMatch(/gateway_tokens_total\{model="m",key="test-key",type="completion"\} 10/);
    expect(text).toMatch(/gateway_tokens_total\{model="m",key="test-key",type="prompt"\} \d+/);
  });

  it("reports replica health, in-flight and saturation, and model readiness", () => {
    expect(text).toMatch(/gateway_replica_ready\{model="m",replica="http:\/\/127\.0\.0\.1:\d+"\} 1/);
    expect(text).toMatch(/gateway_replica_saturated\{model="m",replica="[^"]+"\} 0/);
    expect(text).toMatch(/gateway_replica_in_flight\{model="m",replica="[^"]+"\} 0/);
    expect(text).toMatch(/gateway_models_ready\{model="e"\} 1/);
    expect(text).toMatch(/gateway_requests_in_flight\{model="m"\} 0/);
  });

  it("gateway_build_info: one series at 1, whose version is package.json's", () => {
    const { version } = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8")) as { version: string };
    expect(text.match(/^gateway_build_info\{.*$/gm)).toEqual([`gateway_build_info{version="${version}"} 1`]);
  });

  it("reports the event loop's delay, p99 and longest", () => {
    expect(text).toMatch(/^gateway_event_loop_delay_p99_seconds \d/m);
    expect(text).toMatch(/^gateway_event_loop_delay_max_seconds \d/m);
  });

  it("never contains an API key", () => {
    expect(text).not.toContain(h.key);
    expect(text).not.toMatch(/sk-[A-Za-z0-9_-]{20,}/);
  });

  it("is not served on the public port", async () => {
    expect((await fetch(`${h.gateway.url}/metrics`)).status).toBe(404);
  });

  itWithPromtool("passes promtool check metrics", () => {
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(r.stderr + r.stdout).toBe("");
    expect(r.status).toBe(0);
  });
});
