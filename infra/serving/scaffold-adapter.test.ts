// `npm run model:add -- adapter` adds an adapter to a folder's model.yaml, keeping its comments, and refuses (leaving the
// file as it was) what the loader would reject, naming the folder and the field.
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { adapterOptionsFromArgv } from "../../scripts/model-add";
import { loadModelFolders, ModelFolderError } from "./model-folders";
import { addAdapter } from "./scaffold-adapter";
import { editYaml, folderFiles, scratchModels } from "./testing";

const ROOT = path.resolve(__dirname, "..", "..");

describe("adding an adapter", () => {
  let root: string;
  let cleanup: () => void;
  beforeEach(() => ({ root, cleanup } = scratchModels()));
  afterEach(() => cleanup());
  const qwen = () => folderFiles(root, "generative/qwen3-8b", "qwen3-8b").meta;

  function refused(add: () => unknown): string {
    try {
      add();
    } catch (err) {
      expect(err).toBeInstanceOf(ModelFolderError);
      return (err as Error).message;
    }
    throw new Error("expected the adapter to be refused");
  }

  test("beside the folder's adapters, its comments kept; the folder loads with it", () => {
    const def = addAdapter({ ref: "generative/qwen3-8b", name: "qwen3-8b-sql", source: "hf://org/qwen3-8b-sql-lora", revision: "0123abc", rank: 16, preload: true, root });
    expect(def.lora?.adapters).toEqual([
      expect.objectContaining({ name: "qwen3-8b-tool-use", preload: false }),
      { name: "qwen3-8b-sql", source: "hf://org/qwen3-8b-sql-lora", revision: "0123abc", rank: 16, preload: true },
    ]);
    expect(fs.readFileSync(qwen(), "utf8")).toContain("# An example: a public tool-use LoRA for Qwen/Qwen3-8B");
  });

  test("a folder without adapters gets a lora block, with vLLM's limits unless given; the simulator's needs no source", () => {
    const bge = addAdapter({ ref: "embedder/bge-small-en", name: "bge-legal", source: "s3://models/adapters/bge-legal", rank: 8, root });
    expect(bge.lora).toEqual({ maxLoras: 1, maxLoraRank: 16, adapters: [{ name: "bge-legal", source: "s3://models/adapters/bge-legal", rank: 8, preload: false }] });
    const sim = addAdapter({ ref: "generative/sim-chat", name: "sim-chat-terse", rank: 8, maxLoras: 4, root });
    expect(sim.lora?.maxLoras).toBe(4);
    expect(sim.lora?.adapters.map((a) => a.name)).toEqual(["sim-chat-adapter", "sim-chat-terse"]);
  });

  test.each([
    ["a rank above maxLoraRank", { name: "qwen3-8b-big", source: "hf://o/big", rank: 128 }, /generative\/qwen3-8b: \[lora\] model\.yaml lora\.adapters\[1\]\.rank 128 exceeds lora\.maxLoraRank 64/],
    ["a maxLoras below one", { name: "qwen3-8b-x", source: "hf://o/x", rank: 8, preload: true, maxLoras: 0 }, /generative\/qwen3-8b: \[metadata\] model\.yaml: lora\.maxLoras/],
    ["another folder's model id", { name: "sim-chat", source: "hf://o/x", rank: 8 }, /generative\/qwen3-8b: \[unique id\] model\.yaml lora\.adapters\[1\]\.name "sim-chat" is the model id of .*generative\/sim-chat/],
    ["another folder's adapter", { name: "sim-chat-adapter", source: "hf://o/x", rank: 8 }, /\[unique id\] model\.yaml lora\.adapters\[0\]\.name "sim-chat-adapter" is also lora\.adapters\[1\] of .*generative\/qwen3-8b/],
    ["a vLLM adapter without a source", { name: "qwen3-8b-x", rank: 8 }, /generative\/qwen3-8b: \[lora\] model\.yaml lora\.adapters\[1\]\.source is required for a vLLM model/],
  ])("refuses %s, and leaves model.yaml as it was", (_what, adapter, message) => {
    const before = fs.readFileSync(qwen(), "utf8");
    expect(refused(() => addAdapter({ ref: "generative/qwen3-8b", root, ...adapter }))).toMatch(message);
    expect(fs.readFileSync(qwen(), "utf8")).toBe(before);
  });

  test("maxLoras counts the preloaded adapters, and a slot for the on-demand one; --max-loras and --max-lora-rank raise the limits with the adapter", () => {
    const preload = (name: string, more = {}) => addAdapter({ ref: "generative/qwen3-8b", name, source: `hf://o/${name}`, rank: 8, preload: true, root, ...more });
    preload("qwen3-8b-a");
    expect(refused(() => preload("qwen3-8b-b", { maxLoras: 1 }))).toMatch(/generative\/qwen3-8b: \[lora\] model\.yaml lora\.maxLoras 1 is below the 2 adapters with preload: true/);
    // The folder's qwen3-8b-tool-use is on demand: two preloaded adapters would take both slots.
    expect(refused(() => preload("qwen3-8b-b"))).toMatch(/generative\/qwen3-8b: \[lora\] model\.yaml lora\.maxLoras 2 leaves no slot for the 1 on-demand adapter: .*\(raise maxLoras to at least 3, or preload it with maxLoras 3\)/);
    expect(preload("qwen3-8b-b", { maxLoras: 3 }).lora?.maxLoras).toBe(3);
    expect(addAdapter({ ref: "generative/qwen3-8b", name: "qwen3-8b-big", source: "hf://o/big", rank: 128, maxLoraRank: 128, root }).lora?.maxLoraRank).toBe(128);
  });

  test("an on-demand adapter needs a slot the preloaded ones leave free: refused, model.yaml as it was", () => {
    editYaml(qwen(), (d) => { d.lora.maxLoras = 1; d.lora.adapters = [{ ...d.lora.adapters[0], preload: true }]; });
    const before = fs.readFileSync(qwen(), "utf8");
    expect(refused(() => addAdapter({ ref: "generative/qwen3-8b", name: "qwen3-8b-sql", source: "hf://o/sql", rank: 8, root }))).toMatch(
      /generative\/qwen3-8b: \[lora\] model\.yaml lora\.maxLoras 1 leaves no slot for the 1 on-demand adapter: .* \(raise maxLoras to at least 2, or preload it with maxLoras 2\)/,
    );
    expect(fs.readFileSync(qwen(), "utf8")).toBe(before);
    expect(addAdapter({ ref: "generative/qwen3-8b", name: "qwen3-8b-sql", source: "hf://o/sql", rank: 8, maxLoras: 2, root }).lora?.maxLoras).toBe(2);
  });

  test("a folder that does not exist, or folders already broken, are refused before anything is written", () => {
    expect(() => addAdapter({ ref: "generative/nope", name: "x", rank: 8, root })).toThrow(/generative\/nope does not exist/);
    fs.writeFileSync(qwen(), "ownedBy: [\n");
    expect(refused(() => addAdapter({ ref: "generative/sim-chat", name: "sim-chat-x", rank: 8, root }))).toMatch(/generative\/qwen3-8b: \[metadata\] model\.yaml: not readable YAML/);
    expect(fs.readFileSync(folderFiles(root, "generative/sim-chat", "sim-chat").meta, "utf8")).not.toContain("sim-chat-x");
  });

  test("the command line: adapter <category>/<model> <name> and its options", () => {
    expect(adapterOptionsFromArgv(["adapter", "generative/qwen3-8b", "qwen3-8b-sql", "--source", "hf://o/s", "--rank", "16", "--preload", "--size", "0.3", "--max-loras", "4", "--max-lora-rank", "32"])).toEqual({
      ref: "generative/qwen3-8b",
      name: "qwen3-8b-sql",
      source: "hf://o/s",
      revision: undefined,
      rank: 16,
      preload: true,
      sizeGiB: 0.3,
      maxLoras: 4,
      maxLoraRank: 32,
      root: undefined,
    });
    expect(() => adapterOptionsFromArgv(["adapter", "generative/qwen3-8b", "--rank", "8"])).toThrow(/^usage: npm run model:add -- adapter/);
    expect(() => adapterOptionsFromArgv(["adapter", "generative/qwen3-8b", "x"])).toThrow(/^usage/);
  });

  test("npm run model:add -- adapter, as a process: writes the adapter and says how it loads", async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/model-add.ts", "adapter", "generative/sim-chat", "sim-chat-terse", "--rank", "8", "--dir", root], { cwd: ROOT });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => resolve({ code, out }));
    });
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toContain('added adapter "sim-chat-terse"');
    expect(r.out).toContain("loaded when first asked for");
    expect(loadModelFolders(root).find((m) => m.ref === "generative/sim-chat")?.lora?.adapters.map((a) => a.name)).toEqual(["sim-chat-adapter", "sim-chat-terse"]);
  }, 30_000);
});
