// Pinned inputs. No unpinned image in any render: every container of every object a stack variant sends (its own
// objects, and what each chart renders through the program's transforms), initContainers and ephemeral containers
// included, names an image by a tag other than `latest` or by a digest; charts whose archive is absent on the machine
// are not rendered, and the test's title says which. The shipped model folders name their Hugging Face weights and
// adapters by commit, and the rendered download Job and model server use that commit.
import { DEFAULT_BUCKET_JOB_IMAGES } from "../infra/monitoring/constants";
import { findChartArchive, helmBinary, type Manifest } from "../infra/platform/helm";
import { toManifest } from "../infra/platform/k8s-validate";
import { type ResourceRecord, runWithMocks } from "../infra/platform/mocks";
import { pinnedImage } from "../infra/platform/schema-rules";
import { DEFAULT_MODELS_DIR } from "../infra/serving/constants";
import { loadModelFolders } from "../infra/serving/model-folders";
import { DEFAULT_S3_DOWNLOADER_IMAGE, weightsSource } from "../infra/serving/weights";
import { renderStackObjects, STACK_CHARTS } from "./stack-objects";
import { stackVariants } from "./stack-variants";

const CONTAINER_LISTS = ["containers", "initContainers", "ephemeralContainers"] as const;

/** Every container image in an object, wherever a pod spec sits in it (Deployment, Job, CronJob, Pod…), by its path. */
export function containerImages(obj: unknown, at = ""): { path: string; image: unknown }[] {
  if (Array.isArray(obj)) return obj.flatMap((v, i) => containerImages(v, `${at}[${i}]`));
  if (obj === null || typeof obj !== "object") return [];
  return Object.entries(obj as Record<string, unknown>).flatMap(([key, value]) => {
    const here = at ? `${at}.${key}` : key;
    if ((CONTAINER_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      return value.map((c: { name?: string; image?: unknown }, i) => ({ path: `${here}[${c?.name ?? i}]`, image: c?.image }));
    }
    return containerImages(value, here);
  });
}

/** Why an image reference is not pinned (no tag or digest, or `latest`), or undefined when it is. */
export function unpinned(image: unknown): string | undefined {
  const r = pinnedImage.safeParse(image);
  return r.success ? undefined : r.error.issues.map((i) => i.message).join("; ");
}

describe("containerImages and unpinned", () => {
  test("find containers, init and ephemeral containers at any depth; refuse no tag, latest, and a short digest", () => {
    const job = {
      kind: "CronJob",
      spec: { jobTemplate: { spec: { template: { spec: { initContainers: [{ name: "init", image: "busybox" }], containers: [{ name: "main", image: "amazon/aws-cli:latest" }] } } } } },
    };
    expect(containerImages(job)).toEqual([
      { path: "spec.jobTemplate.spec.template.spec.initContainers[init]", image: "busybox" },
      { path: "spec.jobTemplate.spec.template.spec.containers[main]", image: "amazon/aws-cli:latest" },
    ]);
    expect(containerImages({ spec: { ephemeralContainers: [{ name: "debug", image: "x:1" }] } })).toHaveLength(1);
    expect(unpinned("busybox")).toMatch(/with a tag or a digest/);
    expect(unpinned("amazon/aws-cli:latest")).toMatch(/must be pinned/);
    expect(unpinned("amazon/aws-cli@sha256:123")).toMatch(/with a tag or a digest/);
    expect(unpinned(undefined)).toBeDefined();
    for (const ok of [DEFAULT_S3_DOWNLOADER_IMAGE, `amazon/aws-cli@sha256:${"ab".repeat(32)}`, `registry.internal:5000/aws-cli:latest@sha256:${"ab".repeat(32)}`]) expect(unpinned(ok)).toBeUndefined();
  });
});

test("the platform's own Jobs' default images are pinned", () => {
  for (const image of [DEFAULT_S3_DOWNLOADER_IMAGE, ...Object.values(DEFAULT_BUCKET_JOB_IMAGES)]) expect(unpinned(image)).toBeUndefined();
});

const absent = STACK_CHARTS.filter((c) => !findChartArchive(c.component, c.version)).map((c) => `${c.component}-${c.version}.tgz`);
const helm = helmBinary();
const notRendered = !helm ? "every chart (no helm)" : absent.length > 0 ? `${absent.join(", ")} (archives absent: npm run charts:pull, or AI_PLATFORM_CHARTS_DIR)` : undefined;

describe(`every image of every stack variant is pinned${notRendered ? `; not rendered here: ${notRendered}` : ", the charts' objects included"}`, () => {
  for (const variant of stackVariants()) {
    test(variant.name, async () => {
      const stack = await renderStackObjects(helm, variant.config, variant.secretKeys, { absentCharts: "skip" });
      // Only what the title names is left out.
      for (const s of stack.skipped) expect(helm ? absent.some((a) => s.endsWith(`(${a})`)) : true).toBe(true);
      const objects: { where: string; obj: Manifest }[] = [
        ...stack.direct.map((obj) => ({ where: `${obj.kind} ${obj.metadata.name}`, obj })),
        ...stack.releases.flatMap((r) => r.objects.map((obj) => ({ where: `${r.release}: ${obj.kind} ${obj.metadata.name}`, obj }))),
      ];
      const images = objects.flatMap(({ where, obj }) => containerImages(obj).map((c) => ({ where: `${where} ${c.path}`, image: c.image })));
      // The variant has workloads (a walk that found nothing would pass anything).
      expect(images.length).toBeGreaterThan(0);
      expect(images.flatMap(({ where, image }) => (unpinned(image) ? [`${where}: ${String(image)}: ${unpinned(image)}`] : []))).toEqual([]);
    }, 120_000);
  }
});

/** A Hugging Face commit: a branch or tag moves, a commit does not. */
const COMMIT = /^[0-9a-f]{40}$/;
/**
 * Shipped adapters left without a commit: no commit of theirs was published where it could be read. The list must be
 * exactly the unpinned ones, so pinning one means removing it here.
 */
const UNPINNED_ADAPTERS = ["qwen3-8b-tool-use"];

describe("the shipped model folders pin what they download", () => {
  const folders = loadModelFolders(DEFAULT_MODELS_DIR);

  test("every hf:// weights source names a commit in model.yaml weights.revision", () => {
    const hf = folders.filter((f) => f.weightsSource.kind === "hf");
    expect(hf.map((f) => f.ref).sort()).toEqual(["embedder/bge-small-en", "generative/llama-3.3-70b", "generative/qwen3-8b"]);
    for (const f of hf) expect({ ref: f.ref, revision: f.weightsInfo?.revision }).toEqual({ ref: f.ref, revision: expect.stringMatching(COMMIT) });
  });

  test(`every hf:// adapter names a commit, except ${UNPINNED_ADAPTERS.join(", ")} (no published commit could be read)`, () => {
    const adapters = folders.flatMap((f) => (f.lora?.adapters ?? []).filter((a) => a.source && weightsSource(a.source).kind === "hf"));
    expect(adapters.length).toBeGreaterThan(0);
    expect(adapters.filter((a) => !(a.revision && COMMIT.test(a.revision))).map((a) => a.name)).toEqual(UNPINNED_ADAPTERS);
  });

  test("the download Jobs fetch that commit and the model servers load it (vLLM --revision)", async () => {
    const variant = stackVariants().find((v) => v.name === "every model folder")!;
    const { resources } = await runWithMocks(async () => (await import("./program")).program(), { config: variant.config, secretKeys: variant.secretKeys });
    const one = (type: string, name: string): ResourceRecord => {
      const r = resources.find((x) => x.type === type && x.name === name);
      if (!r) throw new Error(`no ${type} ${name}`);
      return r;
    };
    type Env = { name: string; value?: string }[];
    for (const f of folders.filter((x) => x.weightsSource.kind === "hf")) {
      const revision = f.weightsInfo?.revision as string;
      const job = toManifest(one("kubernetes:batch/v1:Job", `weights-download-${f.slug}`)) as { spec: { template: { spec: { containers: { name: string; env: Env }[] } } } };
      const download = job.spec.template.spec.containers.find((c) => c.name === "download");
      expect({ slug: f.slug, env: download?.env }).toEqual({ slug: f.slug, env: expect.arrayContaining([{ name: "WEIGHTS_REVISION", value: revision }]) });
      const values = one("kubernetes:helm.sh/v4:Chart", `ms-${f.slug}`).inputs.values as { decode: { containers: { args?: string[] }[] } };
      expect({ slug: f.slug, args: values.decode.containers[0]?.args }).toEqual({ slug: f.slug, args: expect.arrayContaining([`--revision=${revision}`]) });
    }
  }, 120_000);
});
