// Weights: where they come from, the cache volume's size and the Job that fills it. The s3:// download command runs for
// real (Debian's AWS CLI against s3rver on loopback) into a folder laid out as the volume, and the files land where
// the rewritten modelArtifacts.uri tells the chart to look. The hf:// download runs huggingface_hub's snapshot_download,
// which is not installable here (no PyPI): its arguments are checked against the library's documented signature.
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { validateKubernetesObject } from "../platform/k8s-validate";
import { containerSecurityContext, podSecurityContext } from "../platform/security";
import {
  buildCacheClaimSpec,
  buildDownloadJobSpec,
  cachedUri,
  cacheSizeGiB,
  DOWNLOAD_IDENTITY,
  downloadJobName,
  HF_DOWNLOAD_SCRIPT,
  MODEL_CACHE_MOUNT,
  weightsSource,
} from "./weights";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

type Container = { command: string[]; env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[]; volumeMounts: { name: string; mountPath: string }[] };
type JobSpec = { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[]; volumes: Record<string, unknown>[]; nodeSelector?: unknown; tolerations?: unknown } } };

const base = {
  slug: "qwen3-8b",
  image: "ghcr.io/llm-d/llm-d-cuda:v0.5.0",
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

  test("a new source, revision or image is a new Job name (a Job's template cannot change)", () => {
    const spec = (o: Record<string, unknown> = {}) => buildDownloadJobSpec({ ...base, source: { kind: "hf", repo: "Qwen/Qwen3-8B" }, ...o });
    const names = [spec(), spec({ revision: "abc" }), spec({ image: "other:1" }), spec({ source: { kind: "hf", repo: "Qwen/Qwen3-14B" } })].map((s) => downloadJobName("qwen3-8b", s));
    expect(new Set(names).size).toBe(4);
    expect(downloadJobName("qwen3-8b", spec())).toBe(names[0]);
    expect(names[0]).toMatch(/^weights-qwen3-8b-[0-9a-f]{8}$/);
  });

  const aws = fs.existsSync("/usr/bin/aws") ? "/usr/bin/aws" : undefined;
  const maybe = aws || process.env.CI ? test : test.skip;
  maybe(
    "s3: the Job's own command syncs the prefix into the volume where the served uri points, and a re-run is a no-op",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "weights-s3-"));
      const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: path.join(dir, "data"), configureBuckets: [{ name: "models" }] });
      const { port } = await server.run();
      const endpoint = `http://127.0.0.1:${port}`;
      const creds = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_DEFAULT_REGION: "us-east-1", HOME: dir };
      const run = (args: string[], env: Record<string, string>) =>
        new Promise<{ code: number | null; err: string }>((resolve) => {
          const p = spawn(args[0] as string, args.slice(1), { env: { PATH: process.env.PATH ?? "", ...env } });
          let err = "";
          p.stderr.on("data", (d: Buffer) => (err += d.toString()));
          p.on("close", (code) => resolve({ code, err }));
        });
      try {
        // Publish a model as an operator would (docs/models.md "Publishing weights").
        const src = path.join(dir, "src");
        fs.mkdirSync(src);
        fs.writeFileSync(path.join(src, "config.json"), '{"max_position_embeddings": 131072}');
        fs.writeFileSync(path.join(src, "model-00001-of-00002.safetensors"), Buffer.alloc(1024 * 1024, 1));
        expect((await run([aws ?? "aws", "s3", "sync", src, "s3://models/meta/llama-3.3-70b", "--endpoint-url", endpoint], creds)).code).toBe(0);

        const source = weightsSource("s3://models/meta/llama-3.3-70b");
        if (source.kind !== "s3") throw new Error("s3 expected");
        const spec = buildDownloadJobSpec({ ...base, slug: "llama", source, image: "amazon/aws-cli:2.27.9", s3: { endpoint, region: "eu-west-1", credentialsSecret: "weights-s3" } }) as JobSpec;
        const c = spec.template.spec.containers[0] as Container;
        // The volume: the Job's mount path, mapped to a local folder.
        const volume = path.join(dir, "volume");
        fs.mkdirSync(volume);
        const command = c.command.map((a) => a.replace(MODEL_CACHE_MOUNT, volume));
        const env = Object.fromEntries(c.env.map((e) => [e.name, e.value ?? creds[e.valueFrom?.secretKeyRef.key as keyof typeof creds]]));
        expect(Object.keys(env).sort()).toEqual(["AWS_ACCESS_KEY_ID", "AWS_DEFAULT_REGION", "AWS_SECRET_ACCESS_KEY", "HOME"]);
        // serving:weightsS3.region: what the CLI signs for.
        expect(env.AWS_DEFAULT_REGION).toBe("eu-west-1");
        const first = await run(command, { ...env, HOME: dir } as Record<string, string>);
        expect(first).toEqual({ code: 0, err: "" });
        // pvc://weights-llama/llama-3.3-70b: the chart serves <mountPath>/llama-3.3-70b.
        const served = (cachedUri("llama", source) as string).replace(/^pvc:\/\/[^/]+\//, "");
        expect(fs.readdirSync(path.join(volume, served)).sort()).toEqual(["config.json", "model-00001-of-00002.safetensors"]);
        const mtime = fs.statSync(path.join(volume, served, "model-00001-of-00002.safetensors")).mtimeMs;
        expect((await run(command, { ...env, HOME: dir } as Record<string, string>)).code).toBe(0);
        expect(fs.statSync(path.join(volume, served, "model-00001-of-00002.safetensors")).mtimeMs).toBe(mtime);
      } finally {
        await server.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );

});
