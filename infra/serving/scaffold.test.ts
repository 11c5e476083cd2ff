// `npm run model:add` writes folders the loader accepts, and refuses what it would reject.
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { loadModelFolders, ModelFolderError } from "./model-folders";
import { scaffoldModel } from "./scaffold";
import { scratchModels } from "./testing";
import { planModels } from "./plan";
import { buildCatalog } from "./catalog";

const ROOT = path.resolve(__dirname, "..", "..");

describe("scaffolder", () => {
  let root: string;
  let cleanup: () => void;
  beforeEach(() => ({ root, cleanup } = scratchModels(false)));
  afterEach(() => cleanup());

  test("a vLLM generative model on 2 GPUs of a node group, with tool calling: loads as asked", () => {
    const def = scaffoldModel({ category: "generative", model: "llama-70b", id: "llama-3.3-70b", weights: "hf://meta-llama/Llama-3.3-70B-Instruct", gpus: 2, replicas: 3, nodeGroup: "gpu-h100", toolCallParser: "llama3_json", root });
    expect(def).toMatchObject({ ref: "generative/llama-70b", slug: "llama-70b", id: "llama-3.3-70b", weights: "hf://meta-llama/Llama-3.3-70B-Instruct", replicas: 3, nodeGroup: "gpu-h100", toolCalling: true, maxConcurrency: 32 });
    expect(def.gpus.perDecodeReplica).toBe(2);
    expect(def.serverValues.decode.parallelism?.tensor).toBe(2);
    expect(loadModelFolders(root).map((m) => m.ref)).toEqual(["generative/llama-70b"]);
  });

  test("an embedder and a simulated model; both go into a catalog", () => {
    scaffoldModel({ category: "embedder", model: "e5", weights: "pvc://model-weights/e5-small", root });
    const sim = scaffoldModel({ category: "generative", model: "toy", simulated: true, replicas: 2, root });
    expect(sim.gpus.perDecodeReplica).toBe(0);
    expect(sim.serverValues.decode.containers[0]?.image).toMatch(/llm-d-inference-sim/);
    const folders = loadModelFolders(root);
    const embedder = folders.find((m) => m.category === "embedder");
    expect(embedder?.serverArgs).toContain("--runner=pooling");
    const catalog = buildCatalog(planModels(["generative/toy", "embedder/e5"], {}, folders, root), { namespace: "app-serving", clusterDomain: "cluster.local" });
    expect(catalog.models.map((m) => m.id)).toEqual(["toy", "e5"]);
  });

  test("refuses: existing folder, missing weights, bad slug; rolls back a duplicate id", () => {
    scaffoldModel({ category: "generative", model: "toy", simulated: true, root });
    expect(() => scaffoldModel({ category: "generative", model: "toy", simulated: true, root })).toThrow(/already exists/);
    expect(() => scaffoldModel({ category: "generative", model: "real", root })).toThrow(/--weights is required/);
    expect(() => scaffoldModel({ category: "generative", model: "9lives", simulated: true, root })).toThrow(/slug "9lives" must be .*--slug/);
    expect(() => scaffoldModel({ category: "generative", model: "toy2", id: "toy", simulated: true, root })).toThrow(ModelFolderError);
    expect(fs.existsSync(path.join(root, "generative", "toy2"))).toBe(false);
  });

  test("npm run model:add (the CLI) creates the folder and says what to do next", async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/model-add.ts", "embedder", "gte", "--weights", "hf://thenlper/gte-small", "--max-num-seqs", "48", "--dir", root],
        { cwd: ROOT },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => resolve({ code, out }));
    });
    expect(r.code).toBe(0);
    expect(r.out).toContain('model id "gte"');
    expect(r.out).toContain('add "embedder/gte" to serving:models');
    expect(loadModelFolders(root)[0]).toMatchObject({ ref: "embedder/gte", maxConcurrency: 48 });
  }, 30_000);
});
