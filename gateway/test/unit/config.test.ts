import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCatalogFile, parseCatalog } from "../../src/config/load-catalog";
import { IMAGE_HEAP_LIMIT_MIB, IMAGE_NODE_FLAGS, memoryBoundTerms, rssBoundBytes } from "../../src/config/memory-bound";
import { LIMIT_SETTINGS, SETTINGS_ENV, limitDoc, settingsFromEnv } from "../../src/config/settings";

const model = (id: string) => ({ id, category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "http://10.0.0.1:8000" }] } });

describe("model catalog", () => {
  it("applies defaults", () => {
    const c = parseCatalog({ models: [model("a")] });
    expect(c.models[0]).toMatchObject({ id: "a", ownedBy: "ai-platform", maxConcurrency: 16 });
  });

  it("names every offending field at once", () => {
    const bad = { models: [model("a"), model("a"), { ...model("b"), category: "vision", upstream: { mode: "endpoints", endpoints: [{ url: "ftp://x" }] } }] };
    expect(() => parseCatalog(bad)).toThrow(/models\[1\]\.id: duplicate/);
    expect(() => parseCatalog(bad)).toThrow(/models\[2\]\.category/);
    expect(() => parseCatalog(bad)).toThrow(/models\[2\]\.upstream\.endpoints\[0\]\.url/);
  });

  it("rejects unknown keys (typos must not be silently ignored)", () => {
    expect(() => parseCatalog({ models: [{ ...model("a"), maxConcurency: 3 }] })).toThrow(/maxConcurency/);
  });

  it("wake: defaults, bounds, and a pool model only with a readiness name to wake by", () => {
    expect(parseCatalog({ models: [{ ...model("a"), wake: {} }] }).models[0]!.wake).toEqual({ timeoutMs: 600_000, maxHeld: 64 });
    expect(() => parseCatalog({ models: [{ ...model("a"), wake: { maxHeld: 0 } }] })).toThrow(/models\[0\]\.wake\.maxHeld/);
    const pool = { id: "p", category: "generative", upstream: { mode: "pool", url: "http://igw.gateway-system.svc.cluster.local" }, wake: {} };
    expect(() => parseCatalog({ models: [pool] })).toThrow(/models\[0\]\.wake: a pool model wakes only with `upstream.readiness`/);
    expect(parseCatalog({ models: [{ ...pool, upstream: { ...pool.upstream, readiness: { host: "model-p.serving.svc.cluster.local", port: 8000 } } }] }).models[0]!.wake).toBeDefined();
  });

  it("aliases name models of the catalog, of one category, under names of their own", () => {
    const embedder = { ...model("e"), category: "embedder" };
    const ok = parseCatalog({ models: [model("a"), model("b")], aliases: [{ id: "chat", models: ["b", "a"] }] });
    expect(ok.aliases).toEqual([{ id: "chat", models: ["b", "a"], listed: true }]);
    const bad = {
      models: [model("a"), model("b"), embedder],
      aliases: [
        { id: "a", models: ["b"] },
        { id: "x", models: ["a", "missing", "a"] },
        { id: "x", models: ["b"] },
        { id: "mixed", models: ["a", "e"] },
        { id: "nested", models: ["x"] },
        { id: "empty", models: [] },
      ],
    };
    const message = (() => {
      try {
        parseCatalog(bad);
      } catch (err) {
        return (err as Error).message;
      }
      return "";
    })();
    expect(message).toMatch(/aliases\[0\]\.id: "a" is a model id/);
    expect(message).toMatch(/aliases\[1\]\.models\[1\]: "missing" is not a model or adapter of the catalog/);
    expect(message).toMatch(/aliases\[1\]\.models\[2\]: "a" is listed twice/);
    expect(message).toMatch(/aliases\[2\]\.id: duplicate alias "x"/);
    expect(message).toMatch(/aliases\[3\]\.models: mixes generative and embedder models/);
    expect(message).toMatch(/aliases\[4\]\.models\[0\]: "x" is not a model or adapter of the catalog \(aliases cannot name aliases\)/);
    expect(message).toMatch(/aliases\[5\]\.models: an alias names at least one model/);
  });

  it("loads YAML and JSON files and reports the path on errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "catalog-"));
    const yamlPath = join(dir, "c.yaml");
    writeFileSync(yamlPath, "models:\n  - id: a\n    category: embedder\n    upstream: {mode: endpoints, endpoints: [{url: 'http://h:1'}]}\n");
    expect(loadCatalogFile(yamlPath).models[0]?.category).toBe("embedder");
    const badPath = join(dir, "bad.json");
    writeFileSync(badPath, "{ not json");
    expect(() => loadCatalogFile(badPath)).toThrow(badPath);
  });
});

describe("gateway settings", () => {
  it("reads the environment with defaults", () => {
    const s = settingsFromEnv({ PORT: "9090" });
    expect(s.port).toBe(9090);
    expect(s.bodyLimitBytes).toBe(4 * 1024 * 1024);
  });
  it("names the environment variable that is wrong", () => {
    expect(() => settingsFromEnv({ PORT: "http", GATEWAY_HEALTH_INTERVAL_MS: "-1" })).toThrow(/PORT[\s\S]*GATEWAY_HEALTH_INTERVAL_MS/);
  });
  it("reads booleans as words, refusing anything else", () => {
    expect(settingsFromEnv({}).listWakeModels).toBe(false);
    expect(settingsFromEnv({ GATEWAY_LIST_WAKE_MODELS: "true" }).listWakeModels).toBe(true);
    expect(settingsFromEnv({ GATEWAY_LIST_WAKE_MODELS: "false" }).listWakeModels).toBe(false);
    expect(() => settingsFromEnv({ GATEWAY_LIST_WAKE_MODELS: "maybe" })).toThrow(/GATEWAY_LIST_WAKE_MODELS/);
  });
});

describe("limits", () => {
  it("every limit documents what it bounds, why its default, and what a client sees", () => {
    for (const key of LIMIT_SETTINGS) {
      const doc = limitDoc(key);
      expect(doc?.description).toBeTruthy();
      expect(doc?.why).toBeTruthy();
      expect(doc?.clientSees).toBeTruthy();
      expect(SETTINGS_ENV[key]).toMatch(/^GATEWAY_/);
    }
  });

  it("checks limits that only make sense together, naming the variable", () => {
    expect(() => settingsFromEnv({ GATEWAY_BODY_LIMIT_BYTES: String(32 * 1024 * 1024) })).toThrow(/GATEWAY_BODY_MEMORY_PER_KEY_BYTES: must be at least the body limit/);
    expect(() => settingsFromEnv({ GATEWAY_BODY_MEMORY_BYTES: String(1024 * 1024) })).toThrow(/GATEWAY_BODY_MEMORY_BYTES/);
    expect(() => settingsFromEnv({ GATEWAY_MAX_CONNECTIONS: "100", GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: "200" })).toThrow(/GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: must be at most maxConnections/);
    expect(settingsFromEnv({}).maxConnectionsPerAddress).toBe(0); // behind a proxy every client shares its address
    expect(() => settingsFromEnv({ GATEWAY_ANSWER_MEMORY_PER_KEY_BYTES: "65536" })).toThrow(/GATEWAY_ANSWER_MEMORY_PER_KEY_BYTES: must be at least the largest held answer/);
    expect(() => settingsFromEnv({ GATEWAY_ANSWER_MEMORY_BYTES: String(4 * 1024 * 1024) })).toThrow(/GATEWAY_ANSWER_MEMORY_BYTES: must be at least the per-key share/);
    expect(() => settingsFromEnv({ GATEWAY_MAX_IN_FLIGHT_REQUESTS: "100" })).toThrow(/GATEWAY_MAX_IN_FLIGHT_REQUESTS: must be at least the per-key share/);
    expect(() => settingsFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: "5000" })).toThrow(/GATEWAY_REQUEST_TIMEOUT_MS: must exceed the headers timeout/);
    expect(() => settingsFromEnv({ GATEWAY_MAX_JSON_DEPTH: "5000" })).toThrow(/GATEWAY_MAX_JSON_DEPTH/);
    expect(() => settingsFromEnv({ GATEWAY_LINGER_BYTES: String(1024 * 1024) })).toThrow(/GATEWAY_LINGER_BYTES: must be at least the body limit/);
  });

  it("the defaults keep the gateway under 500 MiB, inside the 512 Mi container", () => {
    const defaults = settingsFromEnv({});
    expect(rssBoundBytes(defaults)).toBe(500 * 1024 * 1024);
    expect(Object.values(memoryBoundTerms(defaults)).every((t) => t > 0)).toBe(true);
  });

  it("the image's heap cap is the one the memory bound assumes", () => {
    // gateway/Dockerfile sets it for the image; memory-bound.ts (and the hostile tests' gateway) assume it.
    const dockerfile = readFileSync(join(__dirname, "..", "..", "Dockerfile"), "utf8");
    const caps = [...dockerfile.matchAll(/--max-old-space-size=(\d+)/g)].map((m) => Number(m[1]));
    expect(caps).toEqual([IMAGE_HEAP_LIMIT_MIB]);
  });

  it("the image's Node flags are the ones the benchmarks and hostile suites start the gateway with", () => {
    const dockerfile = readFileSync(join(__dirname, "..", "..", "Dockerfile"), "utf8");
    const options = [...dockerfile.matchAll(/^\s*(?:ENV\s+)?NODE_OPTIONS=(?:"([^"]*)"|(\S+))/gm)].map((m) => m[1] ?? m[2]);
    expect(options).toEqual([IMAGE_NODE_FLAGS.join(" ")]);
  });
});
