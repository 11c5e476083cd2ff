// The model-folder loader: the samples load; every rule, broken in a scratch copy, fails naming folder and rule.
import * as fs from "fs";
import * as path from "path";
import { loadModelFolders, ModelFolderError } from "./model-folders";
import { editYaml, folderFiles, scratchModels } from "./testing";
import { gpuDemand, totalGpus } from "./gpus";
import { ModelServerValuesSchema } from "./folder-schemas";

describe("the sample folders", () => {
  const models = loadModelFolders();
  const byRef = Object.fromEntries(models.map((m) => [m.ref, m]));

  test("load, generative first, with ids set at deploy time (not the weights' names)", () => {
    expect(models.map((m) => m.ref)).toEqual(["generative/llama-3.3-70b", "generative/qwen3-8b", "generative/sim-chat", "embedder/bge-small-en"]);
    expect(byRef["generative/llama-3.3-70b"]).toMatchObject({ id: "llama-3.3-70b-instruct", slug: "llama-3-3-70b", tensorParallel: 4, weightsGiB: 131.5, weightsInfo: { gated: true } });
    expect(byRef["generative/qwen3-8b"]).toMatchObject({ id: "qwen3-8b", slug: "qwen3-8b", weights: "hf://Qwen/Qwen3-8B", category: "generative" });
    expect(byRef["embedder/bge-small-en"]).toMatchObject({ id: "bge-small-en-v1.5", slug: "bge-small-en", weights: "hf://BAAI/bge-small-en-v1.5", nodeGroup: "gpu-small" });
  });

  test("concurrency cap from --max-num-seqs, tool calling from vLLM's flag (and the simulator), serving port 8000", () => {
    expect(models.map((m) => [m.id, m.maxConcurrency, m.toolCalling, m.servingPort])).toEqual([
      ["llama-3.3-70b-instruct", 64, true, 8000],
      ["qwen3-8b", 32, true, 8000],
      ["sim-chat", 16, true, 8000],
      ["bge-small-en-v1.5", 64, false, 8000],
    ]);
  });

  test("GPUs per replica as the chart requests them: 4 for the 70B, 1 for the 8B, a time-sliced share for the embedder, none for the simulator", () => {
    expect(models.map((m) => [m.id, m.gpus.resource, m.gpus.perDecodeReplica])).toEqual([
      ["llama-3.3-70b-instruct", "nvidia.com/gpu", 4],
      ["qwen3-8b", "nvidia.com/gpu", 1],
      ["sim-chat", undefined, 0],
      ["bge-small-en-v1.5", "nvidia.com/gpu.shared", 1],
    ]);
  });

  test("vLLM models probe /health, never a /v1 path (vLLM's API key guards those)", () => {
    for (const ref of ["generative/llama-3.3-70b", "generative/qwen3-8b", "embedder/bge-small-en"]) {
      const c = byRef[ref]?.serverValues.decode.containers[0] as Record<string, { httpGet: { path: string } }>;
      expect([c.livenessProbe?.httpGet.path, c.startupProbe?.httpGet.path, c.readinessProbe?.httpGet.path]).toEqual(["/health", "/health", "/health"]);
    }
  });

  test("the simulated model runs the public llm-d simulator image with modelCommand imageDefault", () => {
    const c = byRef["generative/sim-chat"]?.serverValues.decode.containers[0];
    expect(c?.image).toMatch(/^ghcr\.io\/llm-d\/llm-d-inference-sim:/);
    expect(c?.modelCommand).toBe("imageDefault");
  });
});

describe("GPU arithmetic follows the chart", () => {
  const base = (decode: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    ModelServerValuesSchema.parse({ modelArtifacts: { name: "m", uri: "hf://o/m", labels: { a: "b" } }, decode, ...extra });
  test("tensor × dataLocal unless the limit names the accelerator", () => {
    expect(gpuDemand(base({ parallelism: { tensor: 2 }, containers: [{ image: "vllm" }] })).perDecodeReplica).toBe(2);
    expect(gpuDemand(base({ parallelism: { tensor: 2, dataLocal: 2 }, containers: [{ image: "vllm" }] })).perDecodeReplica).toBe(4);
    expect(gpuDemand(base({ parallelism: { tensor: 4 }, containers: [{ image: "vllm", resources: { limits: { "nvidia.com/gpu": "2" } } }] })).perDecodeReplica).toBe(2);
  });
  test("cpu accelerator and the simulator image need none; prefill counts and scales to zero with the model", () => {
    expect(gpuDemand(base({ containers: [{ image: "vllm" }] }, { accelerator: { type: "cpu" } })).perDecodeReplica).toBe(0);
    expect(gpuDemand(base({ containers: [{ image: "ghcr.io/llm-d/llm-d-inference-sim:v0.7.1" }] })).perDecodeReplica).toBe(0);
    const pd = gpuDemand(base({ containers: [{ image: "vllm" }] }, { prefill: { create: true, replicas: 2, containers: [{ image: "vllm" }] } }));
    expect([totalGpus(pd, 3), totalGpus(pd, 0)]).toEqual([5, 0]);
  });
});

describe("broken folders fail with the folder and the rule named", () => {
  let root: string;
  let cleanup: () => void;
  beforeEach(() => ({ root, cleanup } = scratchModels()));
  afterEach(() => cleanup());
  const qwen = () => folderFiles(root, "generative/qwen3-8b", "qwen3-8b");
  const where = "generative/qwen3-8b: ";

  function failure(): string {
    try {
      loadModelFolders(root);
    } catch (err) {
      expect(err).toBeInstanceOf(ModelFolderError);
      return (err as Error).message;
    }
    throw new Error("expected the folders to be rejected");
  }

  test.each([
    ["folder pair: ms half missing", () => fs.rmSync(path.dirname(qwen().ms), { recursive: true }), /\[folder pair\] no ms-<slug> folder/],
    ["folder pair: two pools", () => fs.cpSync(path.dirname(qwen().gaie), path.join(qwen().dir, "gaie-other"), { recursive: true }), /\[folder pair\] 2 gaie-<slug> folders/],
    ["folder pair: values.yaml missing", () => fs.rmSync(qwen().gaie), /\[folder pair\] gaie-qwen3-8b\/values\.yaml is missing/],
    ["one slug", () => fs.renameSync(path.dirname(qwen().ms), path.join(qwen().dir, "ms-qwen3")), /\[one slug\] gaie-qwen3-8b and ms-qwen3 name different slugs/],
    ["values parse: YAML", () => fs.writeFileSync(qwen().ms, "decode: [unclosed\n"), /\[values parse\] ms-qwen3-8b\/values\.yaml: not readable YAML/],
    ["values parse: schema", () => editYaml(qwen().ms, (d) => (d.decode.replicas = "two")), /\[values parse\] ms-qwen3-8b\/values\.yaml: decode\.replicas: /],
    ["values parse: pool without matchLabels", () => editYaml(qwen().gaie, (d) => delete d.inferencePool.modelServers), /\[values parse\] gaie-qwen3-8b\/values\.yaml: inferencePool\.modelServers/],
    ["values parse: multinode", () => editYaml(qwen().ms, (d) => (d.multinode = true)), /multinode: multinode \(LeaderWorkerSet\) is not supported/],
    ["pool selector", () => editYaml(qwen().gaie, (d) => (d.inferencePool.modelServers.matchLabels["llm-d.ai/model"] = "qwen3")), /\[pool selector\] gaie-qwen3-8b .*llm-d\.ai\/model=qwen3 but ms-qwen3-8b modelArtifacts\.labels has llm-d\.ai\/model=qwen3-8b/],
    ["pool selector: label absent", () => editYaml(qwen().ms, (d) => delete d.modelArtifacts.labels["llm-d.ai/model"]), /\[pool selector\] .*lacks it/],
    ["serving port", () => editYaml(qwen().gaie, (d) => (d.inferencePool.targetPorts = [{ number: 8200 }])), /\[serving port\] ms-qwen3-8b routing\.servicePort 8000 is not a target port of gaie-qwen3-8b \(8200\)/],
    ["container port", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].ports[0].containerPort = 8200)), /\[container port\] routing\.proxy is off/],
    ["served model name: duplicated", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--served-model-name=x")), /\[served model name\] the chart already passes --served-model-name qwen3-8b/],
    ["served model name: custom command", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].modelCommand = "custom")), /\[served model name\] modelCommand custom/],
    ["concurrency: missing", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].args = ["--max-model-len=4096"])), /\[concurrency\] set --max-num-seqs/],
    ["concurrency: above vLLM's", () => editYaml(qwen().meta, (d) => (d.maxConcurrency = 64)), /\[concurrency\] model\.yaml maxConcurrency 64 exceeds --max-num-seqs 32/],
    ["metadata", () => editYaml(qwen().meta, (d) => (d.owner = "x")), /\[metadata\] model\.yaml: Unrecognized key: "owner"/],
    ["metadata: unknown family", () => editYaml(qwen().meta, (d) => (d.family = "qwen4")), /\[metadata\] model\.yaml: family: must be one of qwen3, /],
    ["max model len: missing", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].args = d.decode.containers[0].args.filter((a: string) => !a.startsWith("--max-model-len")))), /\[max model len\] decode\.containers\[0\]\.args must set --max-model-len/],
    ["max model len: over the context", () => editYaml(qwen().meta, (d) => (d.contextLength = 8192)), /\[max model len\] --max-model-len 16384 exceeds the model's context \(model\.yaml contextLength 8192\)/],
    ["max model len: context unknown", () => editYaml(qwen().meta, (d) => delete d.contextLength), /\[max model len\] model\.yaml contextLength is required/],
    ["tensor parallel: flag disagrees", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--tensor-parallel-size=2")), /\[tensor parallel\] .*--tensor-parallel-size 2 but decode\.parallelism\.tensor is 1/],
    ["tensor parallel: more than the GPUs requested", () => editYaml(qwen().ms, (d) => (d.decode.parallelism.tensor = 2)), /\[tensor parallel\] decode\.parallelism asks for 2 GPUs per pod \(tensor 2\) but decode\.containers\[0\]\.resources\.limits nvidia\.com\/gpu is 1/],
    ["shared memory: not in memory", () => editYaml(qwen().ms, (d) => { d.decode.parallelism.tensor = 2; d.decode.containers[0].resources.limits["nvidia.com/gpu"] = "2"; d.decode.volumes.find((v: { name: string }) => v.name === "shm").emptyDir = {}; }), /\[shared memory\] decode\.volumes shm must be an emptyDir with medium Memory/],
    ["shared memory: over the memory limit", () => editYaml(qwen().ms, (d) => { d.decode.parallelism.tensor = 2; d.decode.containers[0].resources.limits["nvidia.com/gpu"] = "2"; d.decode.containers[0].resources.limits.memory = "8Gi"; }), /\[shared memory\] .*limits\.memory 8Gi must exceed the 8Gi of \/dev\/shm/],
    ["gpu memory", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--gpu-memory-utilization=1.5")), /\[gpu memory\] --gpu-memory-utilization must be in \(0, 1\], got 1\.5/],
    ["parsers: family missing", () => editYaml(qwen().meta, (d) => delete d.family), /\[parsers\] model\.yaml family is required/],
    ["parsers: wrong tool parser", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--tool-call-parser=llama3_json")), /\[parsers\] family qwen3 needs --tool-call-parser=hermes/],
    ["parsers: reasoning parser missing", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].args = d.decode.containers[0].args.filter((a: string) => !a.startsWith("--reasoning-parser")))), /\[parsers\] family qwen3 needs --reasoning-parser=qwen3/],
    ["weights: size missing", () => editYaml(qwen().meta, (d) => delete d.weights), /\[weights\] model\.yaml weights\.sizeGiB is required/],
    ["weights: over the cache volume", () => editYaml(qwen().meta, (d) => (d.weights.cacheGiB = 10)), /\[weights\] model\.yaml weights\.cacheGiB 10 is smaller than weights\.sizeGiB 16/],
    ["probes: startup probe missing", () => editYaml(qwen().ms, (d) => delete d.decode.containers[0].startupProbe), /\[probes\] decode\.containers\[0\]\.startupProbe is required/],
    ["runner: --task on a generative model", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--task=generate")), /\[runner\] decode\.containers\[0\]\.args passes --task generate, which vLLM 0\.14\.1 .* no longer parses, so it would refuse to start: remove it/],
    ["runner: pooling for a generative model", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--runner", "pooling")), /\[runner\] a generative model runs --runner=generate, not --runner=pooling/],
    ["probes: a /v1 path", () => editYaml(qwen().ms, (d) => (d.decode.containers[0].readinessProbe.httpGet.path = "/v1/models")), /\[probes\] decode\.containers\[0\]\.readinessProbe probes \/v1\/models/],
    ["lora: an adapter above maxLoraRank", () => editYaml(qwen().meta, (d) => (d.lora.maxLoraRank = 32)), /\[lora\] model\.yaml lora\.adapters\[0\]\.rank 64 exceeds lora\.maxLoraRank 32: vLLM refuses .* \(raise maxLoraRank to 64\)/],
    ["lora: a maxLoraRank vLLM does not take", () => editYaml(qwen().meta, (d) => (d.lora.maxLoraRank = 48)), /\[metadata\] model\.yaml: lora\.maxLoraRank: must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512/],
    ["lora: preloaded above maxLoras", () => editYaml(qwen().meta, (d) => { d.lora.maxLoras = 1; d.lora.adapters = [{ ...d.lora.adapters[0], preload: true }, { ...d.lora.adapters[0], name: "qwen3-8b-sql", preload: true }]; }), /\[lora\] model\.yaml lora\.maxLoras 1 is below the 2 adapters with preload: true/],
    [
      "lora: preloaded adapters in every slot, one on demand",
      () => editYaml(qwen().meta, (d) => { d.lora.maxLoras = 1; d.lora.adapters.unshift({ ...d.lora.adapters[0], name: "qwen3-8b-sql", preload: true }); }),
      /\[lora\] model\.yaml lora\.maxLoras 1 leaves no slot for the 1 on-demand adapter: the 1 adapter with preload: true holds every slot of a replica and is never unloaded, so requests for it would wait and get 429 \(raise maxLoras to at least 2, or preload it with maxLoras 2\)/,
    ],
    ["lora: a name that is no model id", () => editYaml(qwen().meta, (d) => (d.lora.adapters[0].name = "tool use")), /\[metadata\] model\.yaml: lora\.adapters\.0\.name: model id: /],
    ["lora: a vLLM adapter without a source", () => editYaml(qwen().meta, (d) => delete d.lora.adapters[0].source), /\[lora\] model\.yaml lora\.adapters\[0\]\.source is required for a vLLM model/],
    ["lora: a LoRA flag in the args", () => editYaml(qwen().ms, (d) => d.decode.containers[0].args.push("--max-loras=4")), /\[lora\] the platform passes --max-loras from model\.yaml lora: remove it from decode\.containers\[0\]\.args/],
    ["lora: weights on a volume of one's own", () => editYaml(qwen().ms, (d) => (d.modelArtifacts.uri = "pvc://models/qwen3-8b")), /\[lora\] adapters are downloaded into the model's weights cache, which a pvc:\/\/ model has none of/],
    ["lora: two names, one folder", () => editYaml(qwen().meta, (d) => d.lora.adapters.push({ ...d.lora.adapters[0], name: "team/tools" }, { ...d.lora.adapters[0], name: "team--tools" })), /\[lora\] model\.yaml lora\.adapters\[2\]\.name "team--tools" and lora\.adapters\[1\]\.name would share the folder lora-adapters\/team--tools/],
    [
      "lora: a picker configuration of the folder's own, without the scorer",
      () => editYaml(qwen().gaie, (d) => { d.inferenceExtension.pluginsConfigFile = "mine.yaml"; d.inferenceExtension.pluginsCustomConfig = { "mine.yaml": "plugins:\n- type: queue-scorer\nschedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: queue-scorer\n" }; }),
      /\[lora\] the pool's inferenceExtension\.pluginsConfigFile mine\.yaml does not score with lora-affinity-scorer/,
    ],
    ["lora: the chart's latency predictor, which scores by nothing else", () => editYaml(qwen().gaie, (d) => (d.inferenceExtension.latencyPredictor = { enabled: true })), /\[lora\] the pool's inferenceExtension\.latencyPredictor makes default-plugins\.yaml score by predicted latency only/],
    ["lora: the picker's LoRA metric turned off", () => editYaml(qwen().gaie, (d) => (d.inferenceExtension.flags["lora-info-metric"] = "")), /\[lora\] the pool's inferenceExtension\.flags\.lora-info-metric is "": the picker would not see which adapters a pod holds/],
  ])("%s", (_name, breakIt, message) => {
    breakIt();
    const text = failure();
    expect(text).toContain(where);
    expect(text).toMatch(message);
    // Only the broken folder is named.
    expect(text).not.toContain("sim-chat:");
  });

  test.each([
    ["embedder: generative runner", (f: ReturnType<typeof folderFiles>) => editYaml(f.ms, (d) => (d.decode.containers[0].args = d.decode.containers[0].args.filter((a: string) => a !== "--runner=pooling"))), /\[embedder\] an embedder runs vLLM's pooling runner/],
    ["embedder: vLLM's default GPU share", (f: ReturnType<typeof folderFiles>) => editYaml(f.ms, (d) => (d.decode.containers[0].args = d.decode.containers[0].args.filter((a: string) => !a.startsWith("--gpu-memory-utilization")))), /\[embedder\] set --gpu-memory-utilization/],
    ["embedder: a generative family", (f: ReturnType<typeof folderFiles>) => editYaml(f.meta, (d) => (d.family = "qwen3")), /\[embedder\] model\.yaml family qwen3 is not an embedding family/],
    [
      "embedder: --task, which vLLM 0.14 no longer parses",
      (f: ReturnType<typeof folderFiles>) => editYaml(f.ms, (d) => (d.decode.containers[0].args = d.decode.containers[0].args.map((a: string) => (a === "--runner=pooling" ? "--task=embed" : a)))),
      /\[runner\] decode\.containers\[0\]\.args passes --task embed, which vLLM 0\.14\.1 \(ghcr\.io\/llm-d\/llm-d-cuda:v0\.5\.0\) no longer parses, so it would refuse to start: write --runner=pooling instead/,
    ],
    ["embedder: a runner vLLM does not know", (f: ReturnType<typeof folderFiles>) => editYaml(f.ms, (d) => d.decode.containers[0].args.push("--runner=embedding")), /\[runner\] --runner embedding is not one vLLM 0\.14\.1 .* parses \(auto, generate, pooling, draft\): use --runner=pooling/],
    ["embedder: a conversion that makes no embeddings", (f: ReturnType<typeof folderFiles>) => editYaml(f.ms, (d) => d.decode.containers[0].args.push("--convert=classify")), /\[runner\] --convert=classify does not make embeddings: use --convert=embed/],
  ])("%s", (_name, breakIt, message) => {
    breakIt(folderFiles(root, "embedder/bge-small-en", "bge-small-en"));
    const text = failure();
    expect(text).toContain("embedder/bge-small-en: ");
    expect(text).toMatch(message);
  });

  test.each([
    ["a flag the pinned simulator does not parse", (args: string[]) => [...args, "--enable-auto-tool-choice"], /\[simulator\] decode\.containers\[0\]\.args passes --enable-auto-tool-choice, which llm-d-inference-sim 0\.7\.1 does not parse/],
    ["a duration without its unit", (args: string[]) => args.map((a) => (a.startsWith("--inter-token-latency") ? "--inter-token-latency=20" : a)), /\[simulator\] --inter-token-latency 20 is not a duration llm-d-inference-sim 0\.7\.1 reads: write it with a unit, e\.g\. 20ms/],
  ])("simulator: %s", (_name, edit, message) => {
    editYaml(folderFiles(root, "generative/sim-chat", "sim-chat").ms, (d) => (d.decode.containers[0].args = edit(d.decode.containers[0].args)));
    const text = failure();
    expect(text).toContain("generative/sim-chat: ");
    expect(text).toMatch(message);
  });

  test("simulator: an embedder on the pinned simulator, which serves no embeddings", () => {
    const sim = folderFiles(root, "generative/sim-chat", "sim-chat");
    fs.renameSync(sim.dir, path.join(root, "embedder", "sim-chat"));
    expect(failure()).toMatch(/embedder\/sim-chat: \[simulator\] llm-d-inference-sim 0\.7\.1 serves no \/v1\/embeddings/);
  });

  test("slug format", () => {
    const { dir } = qwen();
    fs.renameSync(path.join(dir, "gaie-qwen3-8b"), path.join(dir, "gaie-Qwen_3"));
    fs.renameSync(path.join(dir, "ms-qwen3-8b"), path.join(dir, "ms-Qwen_3"));
    expect(failure()).toMatch(/generative\/qwen3-8b: \[one slug\] slug "Qwen_3" must be 1-40 lowercase/);
  });

  test("unique id and unique slug across folders", () => {
    fs.cpSync(qwen().dir, path.join(root, "generative", "qwen-copy"), { recursive: true });
    const text = failure();
    expect(text).toMatch(/generative\/qwen3-8b: \[unique id\] id "qwen3-8b" is also used by .*generative\/qwen-copy/);
    expect(text).toMatch(/\[unique slug\] slug "qwen3-8b"/);
  });

  test.each([
    ["another folder's model id", "sim-chat", /generative\/qwen3-8b: \[unique id\] model\.yaml lora\.adapters\[0\]\.name "sim-chat" is the model id of .*generative\/sim-chat/],
    ["its own model id", "qwen3-8b", /generative\/qwen3-8b: \[unique id\] model\.yaml lora\.adapters\[0\]\.name "qwen3-8b" is the model id of .*generative\/qwen3-8b/],
    ["another folder's adapter", "sim-chat-adapter", /generative\/sim-chat: \[unique id\] model\.yaml lora\.adapters\[0\]\.name "sim-chat-adapter" is also lora\.adapters\[0\] of .*generative\/qwen3-8b/],
  ])("an adapter name is an id of its own: not %s", (_what, name, message) => {
    editYaml(qwen().meta, (d) => (d.lora.adapters[0].name = name));
    expect(failure()).toMatch(message);
  });

  test("a model with adapters: the picker configuration of the folder's own may score with them", () => {
    const mine = "plugins:\n- type: lora-affinity-scorer\n  name: lora\nschedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: lora\n";
    editYaml(qwen().gaie, (d) => ((d.inferenceExtension.pluginsConfigFile = "mine.yaml"), (d.inferenceExtension.pluginsCustomConfig = { "mine.yaml": mine })));
    expect(loadModelFolders(root).find((m) => m.ref === "generative/qwen3-8b")?.lora?.adapters.map((a) => a.name)).toEqual(["qwen3-8b-tool-use"]);
  });

  test.each([
    ["one preloaded, one on demand, a slot to spare", 2, [true, false]],
    ["every adapter preloaded, as many slots as adapters", 2, [true, true]],
  ])("lora: maxLoras holds the adapters: %s", (_what, maxLoras, preloads) => {
    editYaml(qwen().meta, (d) => {
      d.lora.maxLoras = maxLoras;
      d.lora.adapters = preloads.map((preload, i) => ({ ...d.lora.adapters[0], name: `qwen3-8b-${i}`, preload }));
    });
    expect(loadModelFolders(root).find((m) => m.ref === "generative/qwen3-8b")?.lora).toMatchObject({ maxLoras, adapters: preloads.map((preload) => ({ preload })) });
  });

  test("unknown category", () => {
    fs.mkdirSync(path.join(root, "vision"));
    expect(failure()).toMatch(/vision: \[category\] must be one of generative, embedder/);
  });

  test("every broken folder is reported at once, referenced or not", () => {
    editYaml(qwen().gaie, (d) => (d.inferencePool.targetPorts = [{ number: 9000 }]));
    editYaml(folderFiles(root, "embedder/bge-small-en", "bge-small-en").ms, (d) => (d.modelArtifacts.labels = { other: "x" }));
    const text = failure();
    expect(text).toMatch(/^Invalid model folders \(3 problems\)/);
    expect(text).toMatch(/generative\/qwen3-8b: \[serving port\]/);
    expect(text).toMatch(/embedder\/bge-small-en: \[pool selector\] .*llm-d\.ai\/inference-serving=true/);
    expect(text).toMatch(/embedder\/bge-small-en: \[pool selector\] .*llm-d\.ai\/model=bge-small-en/);
  });

  test("an empty or missing root has no models", () => {
    expect(loadModelFolders(path.join(root, "nothing-here"))).toEqual([]);
  });
});
