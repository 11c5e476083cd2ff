// npm start's model at zero: the local scaler starts no simulator for it, a request through the gateway wakes it and
// succeeds, an idle model stops, and the next request wakes it again. Real gateway and simulators on loopback; the
// scaler's state and events are observed, never the clock.
import { once } from "node:events";
import { generateApiKey, hashApiKey } from "../gateway/src/auth/api-keys";
import { parseCatalog } from "../gateway/src/config/load-catalog";
import { settingsFromEnv } from "../gateway/src/config/settings";
import { startGateway, type RunningGateway } from "../gateway/src/server";
import { startLocalFleet, type LocalModel, type RunningFleet } from "./fleet";

const COLD: LocalModel = {
  id: "cold-chat",
  category: "generative",
  ownedBy: "ai-platform",
  replicas: 2,
  maxConcurrency: 4,
  simulator: { maxNumSeqs: 4, latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 } },
  scaleToZero: { loadMs: 300, idleStopMs: 1500 },
};
const WARM: LocalModel = { ...COLD, id: "warm-chat", replicas: 1, scaleToZero: undefined };

describe("local scaler (a model that scales to zero under npm start)", () => {
  const key = generateApiKey();
  const lines: string[] = [];
  let fleet: RunningFleet;
  let gateway: RunningGateway;

  beforeAll(async () => {
    fleet = await startLocalFleet([WARM, COLD], (line) => lines.push(line));
    gateway = await startGateway({
      settings: settingsFromEnv({}, { host: "127.0.0.1", port: 0, metricsPort: 0, healthIntervalMs: 50, drainDelayMs: 0, shutdownGraceMs: 2000, logLevel: "silent" }),
      catalog: parseCatalog(fleet.catalog, "local fleet"),
      keys: [{ name: "test", sha256: hashApiKey(key) }],
    });
    fleet.attach(gateway.registry);
  });
  afterAll(async () => {
    await gateway?.close();
    await fleet?.close();
  });

  const chat = (stream = false) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: COLD.id, messages: [{ role: "user", content: "hi" }], max_tokens: 4, stream }),
    });

  test("a cold model starts with no simulator and no replica in the gateway; its catalog entry holds requests", () => {
    expect(fleet.simulators).toHaveLength(1);
    expect(fleet.scaler.state(COLD.id)).toBe("asleep");
    expect(fleet.scaler.simulators(COLD.id)).toHaveLength(0);
    expect(gateway.registry.get(COLD.id)!.replicas).toHaveLength(0);
    const entry = fleet.catalog.models.find((m) => m.id === COLD.id)!;
    expect(entry.wake).toEqual({});
    expect((entry.upstream as { endpoints: unknown[] }).endpoints).toHaveLength(2);
  });

  test("a request wakes it and succeeds; after idle it stops; the next request wakes it again", async () => {
    const res = await chat();
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: unknown[] }).choices).toHaveLength(1);
    expect(fleet.scaler.wakes(COLD.id)).toBe(1);
    // Both replicas were started on the addresses the catalog named, and each loaded for loadMs first.
    const sims = fleet.scaler.simulators(COLD.id);
    expect(sims.map((s) => s.url).sort()).toEqual(fleet.scaler.urls(COLD.id).sort());
    expect(sims.map((s) => s.config.startupDelayMs)).toEqual([300, 300]);
    expect(sims.reduce((n, s) => n + s.stats().completedTotal, 0)).toBe(1);

    // What KEDA's triggers read, once the model is up: each replica's vLLM gauges, and the gateway's demand series.
    for (const sim of sims) {
      const text = await (await fetch(`${sim.url}/metrics`)).text();
      for (const name of ["vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc"]) {
        expect(text).toMatch(new RegExp(`^${name}\\{model_name="${COLD.id}"\\} \\d`, "m"));
      }
    }
    const gatewayText = await (await fetch(gateway.metricsUrl)).text();
    for (const name of ["gateway_model_held_requests", "gateway_requests_in_flight"]) expect(gatewayText).toMatch(new RegExp(`^${name}\\{model="${COLD.id}"\\} \\d`, "m"));

    if (fleet.scaler.state(COLD.id) !== "asleep") await once(fleet.scaler, "sleep");
    expect(fleet.scaler.state(COLD.id)).toBe("asleep");
    expect(fleet.scaler.simulators(COLD.id)).toHaveLength(0);
    expect(gateway.registry.get(COLD.id)!.replicas).toHaveLength(0);
    // The address is still held while asleep: a connection is reset, not served.
    await expect(fetch(`${fleet.scaler.urls(COLD.id)[0]}/health`)).rejects.toThrow();

    const again = await chat(true);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("data: [DONE]");
    expect(fleet.scaler.wakes(COLD.id)).toBe(2);
    expect(lines.filter((l) => l.includes("waking"))).toHaveLength(2);
    expect(lines.some((l) => l.includes("stopping (scaled to zero)"))).toBe(true);
  });

  test("the warm model never involves the scaler", async () => {
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: WARM.id, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    });
    expect(res.status).toBe(200);
    expect(fleet.scaler.state(WARM.id)).toBeUndefined();
  });
});
