// The catalog's `lora` block: LoRA adapters served on a model, each under an id of its own. Only the schema and its
// catalog-wide checks; what the gateway does with adapters is elsewhere.
import { parseCatalog } from "../../src/config/load-catalog";

const model = (id: string, lora?: unknown) => ({ id, category: "generative", upstream: { mode: "endpoints", endpoints: [{ url: "http://10.0.0.1:8000" }] }, ...(lora ? { lora } : {}) });
const adapter = (id: string, loading = "on-demand") => ({ id, path: `/model-cache/lora-adapters/${id}`, loading });

function problems(catalog: unknown): string {
  try {
    parseCatalog(catalog);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected the catalog to be refused");
}

describe("catalog lora", () => {
  it("takes the adapters of a model: id, the path its server loads from, preload or on-demand", () => {
    const lora = { maxLoras: 2, adapters: [adapter("a-sql", "preload"), adapter("a-chat")] };
    expect(parseCatalog({ models: [model("a", lora), model("b")] }).models[0]!.lora).toEqual(lora);
  });

  it("refuses a malformed block, naming each field", () => {
    const text = problems({ models: [model("a", { maxLoras: 0, adapters: [{ id: "bad id", path: "relative/dir", loading: "later" }] }), model("b", { maxLoras: 1, adapters: [] })] });
    expect(text).toMatch(/models\[0\]\.lora\.maxLoras/);
    expect(text).toMatch(/models\[0\]\.lora\.adapters\[0\]\.id: model id/);
    expect(text).toMatch(/models\[0\]\.lora\.adapters\[0\]\.path: an absolute path inside the model server's pod/);
    expect(text).toMatch(/models\[0\]\.lora\.adapters\[0\]\.loading/);
    expect(text).toMatch(/models\[1\]\.lora\.adapters: a lora block names at least one adapter/);
    expect(() => parseCatalog({ models: [model("a", { maxLoras: 1, adapters: [{ ...adapter("x"), rank: 8 }] })] })).toThrow(/rank/);
  });

  it("an adapter id is unique in the catalog and never a model id", () => {
    const text = problems({ models: [model("a", { maxLoras: 1, adapters: [adapter("b"), adapter("shared")] }), model("b", { maxLoras: 1, adapters: [adapter("shared")] })] });
    expect(text).toMatch(/models\[0\]\.lora\.adapters\[0\]\.id: "b" is a model id; an adapter needs a name of its own/);
    expect(text).toMatch(/models\[1\]\.lora\.adapters\[0\]\.id: duplicate adapter id "shared" \(also an adapter of "a"\)/);
  });

  it("a batch holds every preloaded adapter", () => {
    const text = problems({ models: [model("a", { maxLoras: 1, adapters: [adapter("x", "preload"), adapter("y", "preload"), adapter("z")] })] });
    expect(text).toMatch(/models\[0\]\.lora\.maxLoras: 1 is below the 2 preloaded adapters/);
  });

  it("an on-demand adapter needs a slot the preloaded ones leave free", () => {
    const text = problems({ models: [model("a", { maxLoras: 1, adapters: [adapter("x", "preload"), adapter("y")] })] });
    expect(text).toMatch(
      /models\[0\]\.lora\.maxLoras: 1 leaves no slot for the 1 on-demand adapter: the 1 preloaded adapter holds every slot of a replica and is never unloaded, so requests for it would wait and get 429 \(raise maxLoras to at least 2, or preload it with maxLoras 2\)/,
    );
    expect(problems({ models: [model("a", { maxLoras: 2, adapters: [adapter("x", "preload"), adapter("w", "preload"), adapter("y"), adapter("z")] })] })).toMatch(
      /models\[0\]\.lora\.maxLoras: 2 leaves no slot for the 2 on-demand adapters: the 2 preloaded adapters hold every slot .* \(raise maxLoras to at least 3, or preload them with maxLoras 4\)/,
    );
    expect(parseCatalog({ models: [model("a", { maxLoras: 2, adapters: [adapter("x", "preload"), adapter("y")] })] }).models[0]!.lora?.maxLoras).toBe(2);
    expect(parseCatalog({ models: [model("a", { maxLoras: 2, adapters: [adapter("x", "preload"), adapter("y", "preload")] })] }).models[0]!.lora?.maxLoras).toBe(2);
  });

  it("an alias never takes an adapter's name", () => {
    const text = problems({ models: [model("a", { maxLoras: 1, adapters: [adapter("a-sql")] })], aliases: [{ id: "a-sql", models: ["a"] }] });
    expect(text).toMatch(/aliases\[0\]\.id: "a-sql" is a LoRA adapter of "a"; an alias needs a name of its own/);
  });

  it("an alias may stand for an adapter, of its base model's category", () => {
    const catalog = parseCatalog({ models: [model("a", { maxLoras: 1, adapters: [adapter("a-sql")] }), model("b")], aliases: [{ id: "sql", models: ["a-sql", "b"] }] });
    expect(catalog.aliases[0]!.models).toEqual(["a-sql", "b"]);
    const embedder = { ...model("e"), category: "embedder" };
    expect(problems({ models: [model("a", { maxLoras: 1, adapters: [adapter("a-sql")] }), embedder], aliases: [{ id: "mixed", models: ["a-sql", "e"] }] })).toMatch(
      /aliases\[0\]\.models: mixes generative and embedder models/,
    );
  });
});
