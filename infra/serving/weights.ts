// Where a model's weights come from and where they are kept. A model whose folder points at a registry
// (`modelArtifacts.uri` hf://<org>/<name>, from the internal Hugging Face-compatible registry or the Hub) or at an
// object store (s3://<bucket>/<prefix>) gets a persistent cache volume `weights-<slug>` that a download Job fills once;
// every replica and every restart then mounts it read-only and loads offline. A folder that already points at a
// volume (pvc://, pvc+hf://) or an image (oci://) is served from there as is. Pure builders; no Pulumi here.
import { createHash } from "crypto";
import { AWS_CLI_IMAGE } from "../platform/images";

/** Image of the s3:// download Job when serving:weightsS3 names none: the AWS CLI, pinned (the bucket Job's release, one image to mirror). */
export const DEFAULT_S3_DOWNLOADER_IMAGE = AWS_CLI_IMAGE;

/** Secrets the download Jobs read (stacks/serving.ts makes them from serving:hfToken and serving:weightsS3*). */
export const HF_TOKEN_SECRET = "hf-token";
export const WEIGHTS_S3_SECRET = "weights-s3";

/** The download Job's user where pods choose theirs: a plain non-root user; fsGroup makes the volume writable to it. */
export const DOWNLOAD_IDENTITY = { uid: 1000, gid: 1000 } as const;

export type WeightsSource =
  | { readonly kind: "hf"; readonly repo: string }
  | { readonly kind: "s3"; readonly bucket: string; readonly prefix: string }
  | { readonly kind: "volume" };

/** What `modelArtifacts.uri` names. */
export function weightsSource(uri: string): WeightsSource {
  const hf = /^hf:\/\/([^/\s]+\/[^/\s]+)$/.exec(uri);
  if (hf) return { kind: "hf", repo: hf[1] as string };
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(\S+?)\/?$/.exec(uri);
  if (s3) return { kind: "s3", bucket: s3[1] as string, prefix: s3[2] as string };
  return { kind: "volume" };
}

/** Name of a model's cache volume (PersistentVolumeClaim). */
export function cacheClaimName(slug: string): string {
  return `weights-${slug}`;
}

/** Default cache size: the weights and LoRA adapters plus 20 % (partial downloads, tokenizer and config files) plus 2 GiB. */
export function cacheSizeGiB(weightsGiB: number, override?: number, adaptersGiB = 0): number {
  return override ?? Math.ceil((weightsGiB + adaptersGiB) * 1.2) + 2;
}

/** Where the download leaves the weights inside the volume, and the `modelArtifacts.uri` that serves them from it. */
export function cachedUri(slug: string, source: WeightsSource): string | undefined {
  const claim = cacheClaimName(slug);
  if (source.kind === "hf") return `pvc+hf://${claim}/${HF_CACHE_DIR}/${source.repo}`;
  if (source.kind === "s3") return `pvc://${claim}/${s3Dir(source)}`;
  return undefined;
}

/** Hugging Face hub cache directory inside the volume (the chart sets HF_HUB_CACHE=/model-cache/<this>). */
export const HF_CACHE_DIR = "hub";
/** Where model servers and download Jobs mount the cache (the chart's HF_HUB_CACHE assumes it). */
export const MODEL_CACHE_MOUNT = "/model-cache";
const MOUNT = MODEL_CACHE_MOUNT;

function s3Dir(source: { prefix: string }): string {
  return source.prefix.split("/").filter(Boolean).pop() as string;
}

/**
 * A Job name that changes with the Job's spec: a Job's template cannot be updated, so a new source, revision or image
 * is a new Job (which runs again; a download finds what is already there and fetches only the rest).
 */
export function downloadJobName(slug: string, spec: unknown): string {
  const hash = createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 8);
  return `weights-${slug}-${hash}`;
}

/**
 * The download, as a Python one-liner the model-server image can run (it ships huggingface_hub). snapshot_download
 * is idempotent: a re-run fetches only what is missing. Llama's `original/` checkpoints duplicate the safetensors
 * and vLLM never reads them.
 */
export const HF_DOWNLOAD_SCRIPT = [
  "import os",
  "from huggingface_hub import snapshot_download",
  "path = snapshot_download(repo_id=os.environ['WEIGHTS_REPO'], revision=os.environ.get('WEIGHTS_REVISION') or None,",
  "                         cache_dir=os.environ['HF_HUB_CACHE'], ignore_patterns=['original/*', '*.pth'])",
  "print('weights ready at', path, flush=True)",
].join("\n");

/**
 * An adapter's download: the repository's files straight into its own folder (`local_dir`, no cache layout), since
 * vLLM is given a fixed path. The same files are skipped as for the weights.
 */
export const HF_ADAPTER_DOWNLOAD_SCRIPT = [
  "import os",
  "from huggingface_hub import snapshot_download",
  "path = snapshot_download(repo_id=os.environ['ADAPTER_REPO'], revision=os.environ.get('ADAPTER_REVISION') or None,",
  "                         local_dir=os.environ['ADAPTER_DIR'], ignore_patterns=['original/*', '*.pth'])",
  "print('adapter ready at', path, flush=True)",
].join("\n");

/** An adapter the Job fetches into `<mount>/<adapters folder>/<dir>` (lora.ts names both). */
export interface AdapterDownloadArgs {
  readonly source: Exclude<WeightsSource, { kind: "volume" }>;
  readonly revision?: string;
  /** Its folder, relative to the volume's root. */
  readonly dir: string;
}

export interface DownloadJobArgs {
  readonly slug: string;
  readonly source: Exclude<WeightsSource, { kind: "volume" }>;
  readonly revision?: string;
  /** hf: the model server's image (it has huggingface_hub); s3: an S3 client image. Each download runs in the image of its source's kind. */
  readonly images: { readonly hf: string; readonly s3?: string };
  /** LoRA adapters to fetch beside the weights, each in a container of its own (they run side by side). */
  readonly adapters?: readonly AdapterDownloadArgs[];
  /** HF-compatible registry (HF_ENDPOINT); default the Hub. */
  readonly registryUrl?: string;
  /** Secret with HF_TOKEN, for gated repositories. */
  readonly tokenSecret?: string;
  /** S3 endpoint, the region to sign for (`serving:weightsS3.region`) and the Secret with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. */
  readonly s3?: { readonly endpoint: string; readonly region: string; readonly credentialsSecret: string };
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Record<string, unknown>[];
  readonly podSecurityContext: Record<string, unknown>;
  readonly containerSecurityContext: Record<string, unknown>;
  readonly labels: Readonly<Record<string, string>>;
}

type Download = { command: string[]; env: Record<string, unknown>[] };

/** The registry, token and HOME every hf:// download gets. */
function hfEnv(args: DownloadJobArgs): Record<string, unknown>[] {
  return [
    { name: "HOME", value: "/tmp" },
    ...(args.registryUrl ? [{ name: "HF_ENDPOINT", value: args.registryUrl }] : []),
    ...(args.tokenSecret ? [{ name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: args.tokenSecret, key: "HF_TOKEN" } } }] : []),
  ];
}

/** `aws s3 sync` of a prefix into a folder of the volume, with the object store's endpoint, region and credentials. */
function s3Sync(args: DownloadJobArgs, source: { bucket: string; prefix: string }, dir: string): Download {
  const s3 = args.s3 as NonNullable<DownloadJobArgs["s3"]>;
  const env: Record<string, unknown>[] = [{ name: "HOME", value: "/tmp" }, { name: "AWS_DEFAULT_REGION", value: s3.region }];
  // The CLI signs for this region; AWS refuses another than the bucket's, S3-compatible stores mostly accept any.
  for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]) env.push({ name: key, valueFrom: { secretKeyRef: { name: s3.credentialsSecret, key } } });
  return { command: ["aws", "s3", "sync", `s3://${source.bucket}/${source.prefix}`, `${MOUNT}/${dir}`, "--endpoint-url", s3.endpoint, "--only-show-errors"], env };
}

function weightsDownload(args: DownloadJobArgs): Download {
  if (args.source.kind === "s3") return s3Sync(args, args.source, s3Dir(args.source));
  const [home, ...access] = hfEnv(args);
  const weights = [{ name: "WEIGHTS_REPO", value: args.source.repo }, { name: "HF_HUB_CACHE", value: `${MOUNT}/${HF_CACHE_DIR}` }, ...(args.revision ? [{ name: "WEIGHTS_REVISION", value: args.revision }] : [])];
  return { command: ["python3", "-c", HF_DOWNLOAD_SCRIPT], env: [home as Record<string, unknown>, ...weights, ...access] };
}

function adapterDownload(args: DownloadJobArgs, adapter: AdapterDownloadArgs): Download {
  if (adapter.source.kind === "s3") return s3Sync(args, adapter.source, adapter.dir);
  const env = [
    ...hfEnv(args),
    { name: "ADAPTER_REPO", value: adapter.source.repo },
    { name: "ADAPTER_DIR", value: `${MOUNT}/${adapter.dir}` },
    ...(adapter.revision ? [{ name: "ADAPTER_REVISION", value: adapter.revision }] : []),
  ];
  return { command: ["python3", "-c", HF_ADAPTER_DOWNLOAD_SCRIPT], env };
}

/** The Job spec that fills `weights-<slug>`; it retries a few times (registries and object stores blip). */
export function buildDownloadJobSpec(args: DownloadJobArgs): Record<string, unknown> {
  const imageOf = (kind: "hf" | "s3") => (kind === "hf" ? args.images.hf : (args.images.s3 as string));
  const container = (name: string, kind: "hf" | "s3", d: Download, resources: Record<string, unknown>) => ({
    name,
    image: imageOf(kind),
    command: d.command,
    env: d.env,
    resources,
    securityContext: args.containerSecurityContext,
    volumeMounts: [
      { name: "weights", mountPath: MOUNT },
      { name: "tmp", mountPath: "/tmp" },
    ],
  });
  // An adapter is a fraction of the weights: a smaller share of the node while the downloads run side by side.
  const adapterResources = { requests: { cpu: "100m", memory: "256Mi" }, limits: { cpu: "1", memory: "2Gi" } };
  return {
    backoffLimit: 3,
    template: {
      metadata: { labels: { ...args.labels } },
      spec: {
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        securityContext: args.podSecurityContext,
        ...(Object.keys(args.nodeSelector).length > 0 ? { nodeSelector: { ...args.nodeSelector } } : {}),
        ...(args.tolerations.length > 0 ? { tolerations: [...args.tolerations] } : {}),
        containers: [
          container("download", args.source.kind, weightsDownload(args), { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2", memory: "4Gi" } }),
          ...(args.adapters ?? []).map((a, i) => container(`adapter-${i}`, a.source.kind, adapterDownload(args, a), adapterResources)),
        ],
        volumes: [
          { name: "weights", persistentVolumeClaim: { claimName: cacheClaimName(args.slug) } },
          { name: "tmp", emptyDir: { sizeLimit: "1Gi" } },
        ],
      },
    },
  };
}

export interface CacheClaimArgs {
  readonly slug: string;
  readonly sizeGiB: number;
  readonly accessMode: "ReadWriteMany" | "ReadWriteOnce";
  readonly storageClass?: string;
}

export function buildCacheClaimSpec(args: CacheClaimArgs): Record<string, unknown> {
  return {
    accessModes: [args.accessMode],
    resources: { requests: { storage: `${args.sizeGiB}Gi` } },
    ...(args.storageClass ? { storageClassName: args.storageClass } : {}),
  };
}
