import { parseCatalog } from "../../src/config/load-catalog";
import { GatewayMetrics } from "../../src/observability/metrics";
import { seedUsageSeries } from "../../src/observability/usage-series";
import { ModelRegistry } from "../../src/upstream/registry";

const model = (id: string, category = "generative") => ({ id, category, upstream: { mode: "endpoints", endpoints: [{ url: "http://10.0.0.1:8000" }] } });

describe("usage series start at zero for what each key may use", () => {
  it("every model for an open key, the alias's models for a key given an alias, nothing else", async () => {
    const catalog = parseCatalog({ models: [model("a"), model("b"), model("e", "embedder")], aliases: [{ id: "chat", models: ["b"] }] });
    const metrics = new GatewayMetrics(new ModelRegistry(catalog));
    seedUsageSeries(metrics, [{ name: "open" }, { name: "aliased", models: ["chat"] }], catalog);
    const text = await metrics.registry.metrics();
    const tokens = [...text.matchAll(/^gateway_tokens_total\{model="(\w+)",key="(\w+)",type="(\w+)"\} 0$/gm)].map((m) => `${m[2]}/${m[1]}/${m[3]}`).sort();
    expect(tokens).toEqual(["aliased/b/completion", "aliased/b/prompt", "open/a/completion", "open/a/prompt", "open/b/completion", "open/b/prompt", "open/e/completion", "open/e/prompt"]);
    expect(text).toMatch(/^gateway_requests_total\{model="e",endpoint="\/v1\/embeddings",status="200",key="open"\} 0$/m);
    expect(text).toMatch(/^gateway_requests_total\{model="b",endpoint="\/v1\/responses",status="200",key="aliased"\} 0$/m);
    expect(text).not.toMatch(/model="a",[^}]*key="aliased"/);
  });

  it("a LoRA adapter is a model of its own: a key given only the adapter moves its series, not its base model's", async () => {
    const lora = { maxLoras: 1, adapters: [{ id: "a-sql", path: "/a/sql", loading: "on-demand" }] };
    const catalog = parseCatalog({ models: [{ ...model("a"), lora }] });
    const metrics = new GatewayMetrics(new ModelRegistry(catalog));
    seedUsageSeries(metrics, [{ name: "tuned", models: ["a-sql"] }], catalog);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^gateway_tokens_total\{model="a-sql",key="tuned",type="prompt"\} 0$/m);
    expect(text).toMatch(/^gateway_requests_total\{model="a-sql",endpoint="\/v1\/chat\/completions",status="200",key="tuned"\} 0$/m);
    expect(text).not.toMatch(/model="a",[^}]*key="tuned"/);
  });
});
