// Weights: where they come from, the cache volume's size and the Job that fills it. The s3:// download command runs for
// real (Debian's AWS CLI against s3rver on loopback) into a folder laid out as the volume, and the files land where
// the rewritten modelArtifacts.uri tells the chart to look. The hf:// download runs huggingface_hub's snapshot_download,
// which is not installable here (no PyPI): its arguments are checked against the library's documented signature.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { validateKubernetesObject } from "../platform/k8s-validate";
import { adapterDownloads, adapterPath } from "./lora";
import { containerSecurityContext, podSecurityContext } from "../platform/security";
import {
  buildCacheClaimSpec,
  buildDownloadJobSpec,
  cachedUri,
  cacheSizeGiB,
  DOWNLOAD_IDENTITY,
  downloadJobName,
  HF_ADAPTER_DOWNLOAD_SCRIPT,
  HF_DOWNLOAD_SCRIPT,
  MODEL_CACHE_MOUNT,
  weightsSource,
} from "./weights";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

type Container = { name: string; image: string; command: string[]; env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[]; volumeMounts: { name: string; mountPath: string }[] };
type JobSpec = { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[]; volumes: Record<string, unknown>[]; nodeSelector?: unknown; tolerations?: unknown } } };

const base = {
  slug: "qwen3-8b",
  images: { hf: "ghcr.io/llm-d/llm-d-cuda:v0.5.0", s3: "amazon/aws-cli:2.37.5" },
  nodeSelector: { workload: "gpu" },
  tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
  podSecurityContext: podSecurityContext(DOWNLOAD_IDENTITY),
  containerSecurityContext: containerSecurityContext(DOWNLOAD_IDENTITY),
  labels: { app: "x" },
};

describe("weights sources and the cache volume", () => {
  test("hf://org/name and s3://bucket/prefix are downloaded; pvc, pvc+hf and oci are served as they are", () => {
    expect(weightsSource("hf://Qwen/Qwen3-8B")).toEqual({ kind: "hf", repo: "Qwen/Qwen3-8B" });
    expect(weightsSource("s3://models/meta/llama-3.3-70b/")).toEqual({ kind: "s3", bucket: "models", prefix: "meta/llama-3.3-70b" });
    for (const uri of ["pvc://weights/qwen", "pvc+hf://weights/hub/Qwen/Qwen3-8B", "oci://registry/model:1"]) expect(weightsSource(uri)).toEqual({ kind: "volume" });
  });

  test("the volume holds the weights with 20 % and 2 GiB to spare; model.yaml cacheGiB overrides", () => {
    expect(cacheSizeGiB(16)).toBe(22);
    expect(cacheSizeGiB(131.5)).toBe(160);
    expect(cacheSizeGiB(0.13)).toBe(3);
    expect(cacheSizeGiB(16, 40)).toBe(40);
    // LoRA adapters count as weights: one of 0.4 GiB still fits, three of 1 GiB grow the volume.
    expect([cacheSizeGiB(16, undefined, 0.4), cacheSizeGiB(16, undefined, 3), cacheSizeGiB(16, 40, 3)]).toEqual([22, 25, 40]);
    expect(buildCacheClaimSpec({ slug: "x", sizeGiB: 160, accessMode: "ReadWriteMany", storageClass: "nfs-client" })).toEqual({
      accessModes: ["ReadWriteMany"],
      resources: { requests: { storage: "160Gi" } },
      storageClassName: "nfs-client",
    });
  });

  test("the served uri points the chart at the cache: HF layout under hub/ (HF_HUB_CACHE), S3 under the prefix's last folder", () => {
    expect(cachedUri("qwen3-8b", weightsSource("hf://Qwen/Qwen3-8B"))).toBe("pvc+hf://weights-qwen3-8b/hub/Qwen/Qwen3-8B");
    expect(cachedUri("llama", weightsSource("s3://models/meta/llama-3.3-70b"))).toBe("pvc://weights-llama/llama-3.3-70b");
    expect(cachedUri("x", weightsSource("pvc://a/b"))).toBeUndefined();
  });
});

describe("the download Job", () => {
  test("hf: the model server's image runs snapshot_download into the cache, with the registry, revision and token", () => {
    const spec = buildDownloadJobSpec({ ...base, source: { kind: "hf", repo: "meta-llama/Llama-3.3-70B-Instruct" }, revision: "6f6073b", registryUrl: "https://models.internal/hf", tokenSecret: "hf-token" }) as JobSpec;
    const c = spec.template.spec.containers[0] as Container;
    expect(c.command).toEqual(["python3", "-c", HF_DOWNLOAD_SCRIPT]);
    expect(Object.fromEntries(c.env.map((e) => [e.name, e.value ?? e.valueFrom]))).toEqual({
      HOME: "/tmp",
      WEIGHTS_REPO: "meta-llama/Llama-3.3-70B-Instruct",
      HF_HUB_CACHE: `${MODEL_CACHE_MOUNT}/hub`,
      WEIGHTS_REVISION: "6f6073b",
      HF_ENDPOINT: "https://models.internal/hf",
      HF_TOKEN: { secretKeyRef: { name: "hf-token", key: "HF_TOKEN" } },
    });
    // snapshot_download(repo_id, revision, cache_dir, ignore_patterns): the checkpoints vLLM never reads are skipped.
    expect(HF_DOWNLOAD_SCRIPT).toMatch(/snapshot_download\(repo_id=.*revision=.*cache_dir=os\.environ\['HF_HUB_CACHE'\], ignore_patterns=\['original\/\*', '\*\.pth'\]\)/s);
    expect(spec.template.spec.volumes).toContainEqual({ name: "weights", persistentVolumeClaim: { claimName: "weights-qwen3-8b" } });
    // It runs where the servers run (a ReadWriteOnce volume binds in their topology), as a non-root user.
    expect(spec.template.spec.nodeSelector).toEqual({ workload: "gpu" });
    expect(() => validateKubernetesObject({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec })).not.toThrow();
  });

  test("a new source, revision, image or adapter is a new Job name (a Job's template cannot change)", () => {
    const spec = (o: Record<string, unknown> = {}) => buildDownloadJobSpec({ ...base, source: { kind: "hf", repo: "Qwen/Qwen3-8B" }, ...o });
    const adapters = [{ source: { kind: "hf", repo: "o/a" }, dir: "lora-adapters/a" }];
    const names = [spec(), spec({ revision: "abc" }), spec({ images: { hf: "other:1" } }), spec({ source: { kind: "hf", repo: "Qwen/Qwen3-14B" } }), spec({ adapters })].map((s) => downloadJobName("qwen3-8b", s));
    expect(new Set(names).size).toBe(5);
    expect(downloadJobName("qwen3-8b", spec())).toBe(names[0]);
    expect(names[0]).toMatch(/^weights-qwen3-8b-[0-9a-f]{8}$/);
  });

  const aws = fs.existsSync("/usr/bin/aws") ? "/usr/bin/aws" : undefined;
  const maybe = aws || process.env.CI ? test : test.skip;
  type S3Run = (args: string[], env: Record<string, string>) => Promise<{ code: number | null; err: string }>;

  /** s3rver on loopback with a `models` bucket, the AWS CLI as the Job runs it, and a folder laid out as the volume. */
  async function withObjectStore(check: (s: { endpoint: string; creds: Record<string, string>; run: S3Run; dir: string; volume: string }) => Promise<void>): Promise<void> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "weights-s3-"));
    const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: path.join(dir, "data"), configureBuckets: [{ name: "models" }] });
    const { port } = await server.run();
    const creds = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_DEFAULT_REGION: "us-east-1", HOME: dir };
    const run: S3Run = (args, env) =>
      new Promise((resolve) => {
        const p = spawn(args[0] === "aws" ? (aws ?? "aws") : (args[0] as string), args.slice(1), { env: { PATH: process.env.PATH ?? "", ...env } });
        let err = "";
        p.stderr.on("data", (d: Buffer) => (err += d.toString()));
        p.on("close", (code) => resolve({ code, err }));
      });
    const volume = path.join(dir, "volume");
    fs.mkdirSync(volume);
    try {
      await check({ endpoint: `http://127.0.0.1:${port}`, creds, run, dir, volume });
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** A container of the Job run here: its command on the volume folder, its secrets from the test's credentials. */
  function runContainer(c: Container, s: { creds: Record<string, string>; run: S3Run; dir: string; volume: string }) {
    const command = c.command.map((a) => a.replace(MODEL_CACHE_MOUNT, s.volume));
    const env = Object.fromEntries(c.env.map((e) => [e.name, e.value ?? s.creds[e.valueFrom?.secretKeyRef.key as string]]));
    return { env, result: s.run(command, { ...env, HOME: s.dir } as Record<string, string>) };
  }

  /** Publishes a folder of files to s3://models/<prefix>, as an operator would (docs/models.md "Publishing weights"). */
  async function publish(s: { endpoint: string; creds: Record<string, string>; run: S3Run; dir: string }, prefix: string, files: Record<string, string | Buffer>) {
    const src = fs.mkdtempSync(path.join(s.dir, "src-"));
    for (const [name, data] of Object.entries(files)) fs.writeFileSync(path.join(src, name), data);
    expect((await s.run(["aws", "s3", "sync", src, `s3://models/${prefix}`, "--endpoint-url", s.endpoint], s.creds)).code).toBe(0);
  }

  maybe(
    "s3: the Job's own command syncs the prefix into the volume where the served uri points, and a re-run is a no-op",
    () =>
      withObjectStore(async (s) => {
        await publish(s, "meta/llama-3.3-70b", { "config.json": '{"max_position_embeddings": 131072}', "model-00001-of-00002.safetensors": Buffer.alloc(1024 * 1024, 1) });
        const source = weightsSource("s3://models/meta/llama-3.3-70b");
        if (source.kind !== "s3") throw new Error("s3 expected");
        const spec = buildDownloadJobSpec({ ...base, slug: "llama", source, s3: { endpoint: s.endpoint, region: "eu-west-1", credentialsSecret: "weights-s3" } }) as JobSpec;
        const c = spec.template.spec.containers[0] as Container;
        expect(c.image).toBe("amazon/aws-cli:2.37.5");
        const { env, result } = runContainer(c, s);
        expect(Object.keys(env).sort()).toEqual(["AWS_ACCESS_KEY_ID", "AWS_DEFAULT_REGION", "AWS_SECRET_ACCESS_KEY", "HOME"]);
        // serving:weightsS3.region: what the CLI signs for.
        expect(env.AWS_DEFAULT_REGION).toBe("eu-west-1");
        expect(await result).toEqual({ code: 0, err: "" });
        // pvc://weights-llama/llama-3.3-70b: the chart serves <mountPath>/llama-3.3-70b.
        const served = (cachedUri("llama", source) as string).replace(/^pvc:\/\/[^/]+\//, "");
        expect(fs.readdirSync(path.join(s.volume, served)).sort()).toEqual(["config.json", "model-00001-of-00002.safetensors"]);
        const mtime = fs.statSync(path.join(s.volume, served, "model-00001-of-00002.safetensors")).mtimeMs;
        expect((await runContainer(c, s).result).code).toBe(0);
        expect(fs.statSync(path.join(s.volume, served, "model-00001-of-00002.safetensors")).mtimeMs).toBe(mtime);
      }),
    120_000,
  );

  maybe(
    "adapters: one container each beside the weights, in its source's image; an s3:// adapter lands at the path vLLM is given",
    () =>
      withObjectStore(async (s) => {
        await publish(s, "adapters/sql", { "adapter_config.json": '{"r": 16, "peft_type": "LORA"}', "adapter_model.safetensors": Buffer.alloc(64 * 1024, 2) });
        const lora = { maxLoras: 2, maxLoraRank: 16, adapters: [
          { name: "team-a/sql", source: "s3://models/adapters/sql", rank: 16, preload: true },
          { name: "chat-tuned", source: "hf://org/chat-lora", revision: "abc123", rank: 8, preload: false },
        ] };
        const adapters = adapterDownloads(lora);
        const spec = buildDownloadJobSpec({ ...base, source: { kind: "hf", repo: "Qwen/Qwen3-8B" }, adapters, tokenSecret: "hf-token", s3: { endpoint: s.endpoint, region: "us-east-1", credentialsSecret: "weights-s3" } }) as JobSpec;
        const [weights, sql, chat] = spec.template.spec.containers as [Container, Container, Container];
        expect([weights.name, sql.name, chat.name]).toEqual(["download", "adapter-0", "adapter-1"]);
        expect([weights.image, sql.image, chat.image]).toEqual([base.images.hf, base.images.s3, base.images.hf]);
        // The hf:// adapter: the repository's files straight into its folder, with the stack's token.
        expect(chat.command).toEqual(["python3", "-c", HF_ADAPTER_DOWNLOAD_SCRIPT]);
        expect(Object.fromEntries(chat.env.map((e) => [e.name, e.value ?? e.valueFrom]))).toEqual({
          HOME: "/tmp",
          HF_TOKEN: { secretKeyRef: { name: "hf-token", key: "HF_TOKEN" } },
          ADAPTER_REPO: "org/chat-lora",
          ADAPTER_DIR: adapterPath("chat-tuned"),
          ADAPTER_REVISION: "abc123",
        });
        expect(HF_ADAPTER_DOWNLOAD_SCRIPT).toMatch(/snapshot_download\(repo_id=os\.environ\['ADAPTER_REPO'\], revision=.*local_dir=os\.environ\['ADAPTER_DIR'\]/s);
        expect(() => validateKubernetesObject({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec })).not.toThrow();
        // The s3:// adapter, run: its files where vLLM's --lora-modules path points (a name's "/" is one folder).
        expect(await runContainer(sql, s).result).toEqual({ code: 0, err: "" });
        const local = path.join(s.volume, path.relative(MODEL_CACHE_MOUNT, adapterPath("team-a/sql")));
        expect(local.endsWith(path.join("lora-adapters", "team-a--sql"))).toBe(true);
        expect(fs.readdirSync(local).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors"]);
      }),
    120_000,
  );

});
