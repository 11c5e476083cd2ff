// Runs a Pulumi program on the engine's own mocks (no CLI, no cluster) and records every resource it declares.
// Used by unit tests of every stack and by the offline render, so both see exactly the same thing.
import { createHash } from "crypto";
import * as pulumi from "@pulumi/pulumi";
import * as runtimeState from "@pulumi/pulumi/runtime/state";

/** Pulumi marks secret values on the wire with this signature (see @pulumi/pulumi runtime/rpc). */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** What replaces a secret value everywhere a recorded input is shown. */
export const SECRET_PLACEHOLDER = "[secret]";

export interface ResourceRecord {
  /** Pulumi type token, e.g. `kubernetes:core/v1:ConfigMap`. */
  readonly type: string;
  readonly name: string;
  /** Inputs as the engine received them; secret values are still wrapped (see `redactSecrets`). */
  readonly inputs: Record<string, unknown>;
  /** false for component resources (including the multi-language helm v4 Chart). */
  readonly custom: boolean;
  /** Names of the resources this one explicitly depends on (`dependsOn`), as the engine received them. */
  readonly dependsOn: string[];
  /** The retainOnDelete option as the engine received it. */
  readonly retainOnDelete: boolean;
  /** How many engine-side transforms were registered on the resource. */
  readonly transforms: number;
}

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getDependenciesList(): string[];
  getRetainondelete(): boolean | undefined;
  getTransformsList(): unknown[];
}

export interface MockRunOptions {
  /** `namespace:key` to raw string value, as in PULUMI_CONFIG. */
  readonly config: Record<string, string>;
  /** Keys of `config` that are secrets (as in PULUMI_CONFIG_SECRET_KEYS). */
  readonly secretKeys?: readonly string[];
  readonly project?: string;
  readonly stack?: string;
  /** Run as a preview (unknowns stay unknown). Default false, so applies resolve. */
  readonly preview?: boolean;
}

export interface MockRunResult<T> {
  readonly resources: ResourceRecord[];
  readonly outputs: T;
}

/** True for a value the engine marked secret. */
export function isSecretValue(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** Every leaf of a value replaced by `[secret]`, keeping its shape (a Secret's `stringData` stays a map). */
function redactLeaves(v: unknown): unknown {
  if (isSecretValue(v)) return redactLeaves(v.value);
  if (Array.isArray(v)) return v.map(redactLeaves);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactLeaves(x)]));
  return SECRET_PLACEHOLDER;
}

/** Deep copy with every secret value replaced by `[secret]` (maps and lists keep their keys and length). */
export function redactSecrets(v: unknown): unknown {
  if (isSecretValue(v)) return redactLeaves(v.value);
  if (Array.isArray(v)) return v.map(redactSecrets);
  if (v !== null && typeof v === "object") {
    if (pulumi.asset.Asset.isInstance(v) || pulumi.asset.Archive.isInstance(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactSecrets(x)]));
  }
  return v;
}

/** Deep copy with every secret unwrapped to its value (tests use it to check a secret reached the right place). */
export function revealSecrets(v: unknown): unknown {
  if (isSecretValue(v)) return revealSecrets(v.value);
  if (Array.isArray(v)) return v.map(revealSecrets);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revealSecrets(x)]));
  }
  return v;
}

/**
 * Outputs a provider computes that are not among the inputs. `@pulumi/random` resources get bytes derived from
 * their name and keepers: stable across runs (the render does not churn), new when a keeper changes (as the real
 * provider replaces the resource then).
 */
export function computedOutputs(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  if (type !== "random:index/randomBytes:RandomBytes") return {};
  const length = Number(inputs.length ?? 32);
  const seed = `${type}::${name}::${JSON.stringify(inputs.keepers ?? {})}`;
  let bytes = Buffer.alloc(0);
  for (let i = 0; bytes.length < length; i++) bytes = Buffer.concat([bytes, createHash("sha256").update(`${seed}::${i}`).digest()]);
  bytes = bytes.subarray(0, length);
  return { base64: bytes.toString("base64"), hex: bytes.toString("hex") };
}

/**
 * Installs the mocks with the given configuration, runs `program`, waits until every registration has reached the
 * (mock) engine and returns what was declared. Resources get their inputs back as state, plus an id, for
 * Kubernetes objects a `metadata.name` (the provider would auto-name them), and `computedOutputs`.
 */
export async function runWithMocks<T>(program: () => T | Promise<T>, opts: MockRunOptions): Promise<MockRunResult<T>> {
  const resources: ResourceRecord[] = [];
  // The mock hook does not see `dependsOn`; the register request does. Keyed by type+name (unique per program).
  const requests = new Map<string, { dependsOn: string[]; retainOnDelete: boolean; transforms: number }>();
  pulumi.runtime.setAllConfig({ ...opts.config }, [...(opts.secretKeys ?? [])]);
  await pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs) {
        resources.push({
          type: args.type,
          name: args.name,
          inputs: args.inputs,
          custom: args.custom ?? true,
          ...(requests.get(`${args.type}::${args.name}`) ?? { dependsOn: [], retainOnDelete: false, transforms: 0 }),
        });
        const state: Record<string, unknown> = { ...args.inputs, ...computedOutputs(args.type, args.name, args.inputs) };
        if (args.type.startsWith("kubernetes:") && args.custom !== false) {
          const metadata = (args.inputs.metadata ?? {}) as Record<string, unknown>;
          state.metadata = { ...metadata, name: metadata.name ?? args.name };
        }
        return { id: `${args.name}-id`, state };
      },
      call(args: pulumi.runtime.MockCallArgs) {
        return args.inputs;
      },
    },
    opts.project ?? "ai-platform",
    opts.stack ?? "test",
    opts.preview ?? false,
  );
  // The mock monitor leaves transforms off; the real engine (CLI >= 3.105) supports them. Turn them on so that
  // programs using them run here too (the mock engine records them but never calls them).
  (runtimeState as unknown as { getStore(): { supportsTransforms: boolean } }).getStore().supportsTransforms = true;
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(req: RegisterRequest, cb: unknown): unknown;
  };
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    // URNs end in `::<name>`; keep the names.
    requests.set(`${req.getType()}::${req.getName()}`, {
      dependsOn: req.getDependenciesList().map((urn) => urn.slice(urn.lastIndexOf("::") + 2)),
      retainOnDelete: req.getRetainondelete() ?? false,
      transforms: req.getTransformsList().length,
    });
    return original(req, cb);
  };
  const outputs = await program();
  // Drain the RPC queue: registrations made inside applies land before we read `resources`.
  await pulumi.runtime.disconnect();
  return { resources, outputs };
}
