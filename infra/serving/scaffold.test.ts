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

  const llama = { category: "generative", model: "llama-70b", id: "llama-3.3-70b", weights: "hf://meta-llama/Llama-3.3-70B-Instruct", weightsGiB: 131.5, gated: true, family: "llama3", contextLength: 131072 } as const;

  test("a vLLM generative model on 2 GPUs of a node group, with tool calling: loads as asked", () => {
    const def = scaffoldModel({ ...llama, gpus: 2, replicas: 3, nodeGroup: "gpu-h100", tools: true, root });
    expect(def).toMatchObject({ ref: "generative/llama-70b", slug: "llama-70b", id: "llama-3.3-70b", weights: "hf://meta-llama/Llama-3.3-70B-Instruct", replicas: 3, nodeGroup: "gpu-h100", toolCalling: true, maxConcurrency: 32, tensorParallel: 2, weightsGiB: 131.5, weightsInfo: { gated: true } });
    expect(def.gpus.perDecodeReplica).toBe(2);
    // The family's parser, max-model-len capped at 32K, host memory per GPU.
    expect(def.serverArgs).toEqual(expect.arrayContaining(["--tool-call-parser=llama3_json", "--max-model-len=32768"]));
    expect(def.serverValues.decode.containers[0]?.resources?.limits).toMatchObject({ memory: "64Gi", "nvidia.com/gpu": "2" });
    expect(loadModelFolders(root).map((m) => m.ref)).toEqual(["generative/llama-70b"]);
  });

  test("a reasoning family gets its reasoning parser; a share of a GPU is requested as that resource", () => {
    const qwen = scaffoldModel({ category: "generative", model: "qwen", weights: "hf://Qwen/Qwen3-8B", weightsGiB: 16, family: "qwen3", contextLength: 40960, root });
    expect(qwen.serverArgs).toContain("--reasoning-parser=qwen3");
    expect(qwen.toolCalling).toBe(false);
    const e5 = scaffoldModel({ category: "embedder", model: "e5", weights: "hf://intfloat/e5-small-v2", weightsGiB: 0.13, family: "e5", contextLength: 512, gpuResource: "nvidia.com/mig-1g.10gb", root });
    expect(e5.gpus).toMatchObject({ resource: "nvidia.com/mig-1g.10gb", perDecodeReplica: 1 });
    expect(e5.serverArgs).toEqual(expect.arrayContaining(["--runner=pooling", "--gpu-memory-utilization=0.10", "--max-model-len=512"]));
  });

  test("refuses what a vLLM model cannot run without: weights size, family and context, a CPU image", () => {
    expect(() => scaffoldModel({ ...llama, weightsGiB: undefined, root })).toThrow(/--weights-size is required/);
    expect(() => scaffoldModel({ ...llama, family: undefined, root })).toThrow(/--family .* and --context-length .* are required/);
    expect(() => scaffoldModel({ ...llama, gpus: 0, root })).toThrow(/--gpus 0 runs vLLM on CPU: give --image/);
    expect(() => scaffoldModel({ ...llama, maxModelLen: 200_000, root })).toThrow(/\[max model len\] --max-model-len 200000 exceeds the model's context/);
    expect(fs.existsSync(path.join(root, "generative", "llama-70b"))).toBe(false);
  });

  test("an embedder and a simulated model; both go into a catalog", () => {
    scaffoldModel({ category: "embedder", model: "e5", weights: "pvc://model-weights/e5-small", family: "e5", contextLength: 512, root });
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
    expect(() => scaffoldModel({ category: "embedder", model: "fake-embed", simulated: true, root })).toThrow(/--simulated serves chat only: llm-d-inference-sim 0\.7\.1 has no \/v1\/embeddings/);
    expect(() => scaffoldModel({ category: "generative", model: "9lives", simulated: true, root })).toThrow(/slug "9lives" must be .*--slug/);
    expect(() => scaffoldModel({ category: "generative", model: "toy2", id: "toy", simulated: true, root })).toThrow(ModelFolderError);
    expect(fs.existsSync(path.join(root, "generative", "toy2"))).toBe(false);
  });

  test("npm run model:add (the CLI) creates the folder and says what to do next", async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/model-add.ts", "embedder", "gte", "--weights", "hf://thenlper/gte-small", "--weights-size", "0.06", "--family", "gte", "--context-length", "512", "--max-num-seqs", "48", "--dir", root],
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

  test("npm run model:add --ask asks for the weights' size, family and context length it was not given (a wrong answer is asked again)", async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/model-add.ts", "generative", "mistral", "--weights", "hf://mistralai/Mistral-7B-Instruct-v0.3", "--tools", "--ask", "--dir", root],
        { cwd: ROOT },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("close", (code) => resolve({ code, out }));
      child.stdin.end("lots\n13.5\nmistral\n32768\n");
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Size of the weights in GiB.*--weights-size must be a number > 0, got lots/s);
    const def = loadModelFolders(root)[0];
    expect(def).toMatchObject({ ref: "generative/mistral", weightsGiB: 13.5, toolCalling: true });
    expect(def?.serverArgs).toEqual(expect.arrayContaining(["--tool-call-parser=mistral", "--max-model-len=32768"]));
  }, 30_000);
});
