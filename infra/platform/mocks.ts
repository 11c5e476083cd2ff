// Runs a Pulumi program on the engine's own mocks (no CLI, no cluster) and records every resource it declares.
// Used by unit tests of every stack and by the offline render, so both see exactly the same thing.
import { createHash } from "crypto";
import * as pulumi from "@pulumi/pulumi";
import { CallbackServer } from "@pulumi/pulumi/runtime/callbacks";
import * as runtimeState from "@pulumi/pulumi/runtime/state";
import { resetClusterChecks, settleClusterChecks } from "./cluster-checks";
import { UNREADABLE_SECRET } from "./config";

/** Pulumi marks secret values on the wire with this signature (see @pulumi/pulumi runtime/rpc). */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** What replaces a secret value everywhere a recorded input is shown. */
export const SECRET_PLACEHOLDER = UNREADABLE_SECRET;

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
  /** Name of the provider resource that manages it (`cluster` for `pulumi:providers:kubernetes::cluster`). */
  readonly provider?: string;
  /** Custom create/update/delete timeouts (as the engine received them, e.g. `45m`). */
  readonly customTimeouts?: { readonly create?: string; readonly update?: string; readonly delete?: string };
  readonly ignoreChanges: string[];
  readonly deleteBeforeReplace?: boolean;
  /** True for a read of an existing object (`Resource.get`), which the program does not manage. */
  readonly read: boolean;
}

/** Resource options as the engine received them, for the render and the lifecycle tests. */
type RecordedOptions = Omit<ResourceRecord, "type" | "name" | "inputs" | "custom">;

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getCustom(): boolean;
  getRemote(): boolean;
  getProvider(): string;
  getDependenciesList(): string[];
  getRetainondelete(): boolean | undefined;
  getTransformsList(): unknown[];
  getIgnorechangesList(): string[];
  getDeletebeforereplace(): boolean;
  getDeletebeforereplacedefined(): boolean;
  getCustomtimeouts(): { getCreate(): string; getUpdate(): string; getDelete(): string } | undefined;
}

interface ReadRequest {
  getType(): string;
  getName(): string;
  getId(): string;
  getProvider(): string;
  getDependenciesList(): string[];
}

type Callback = (err: Error | null, response?: unknown) => void;

export interface MockRunOptions {
  /** `namespace:key` to raw string value, as in PULUMI_CONFIG. */
  readonly config: Record<string, string>;
  /** Keys of `config` that are secrets (as in PULUMI_CONFIG_SECRET_KEYS). */
  readonly secretKeys?: readonly string[];
  readonly project?: string;
  readonly stack?: string;
  /** Run as a preview (unknowns stay unknown). Default false, so applies resolve. */
  readonly preview?: boolean;
  /** Objects the simulated cluster does not have: a read (`Resource.get`) of one of these ids fails as the provider's does. */
  readonly absentObjects?: readonly string[];
  /** Objects the simulated cluster has, by id (`namespace/name`): what a read (`Resource.get`) of one returns. */
  readonly existingObjects?: Readonly<Record<string, Record<string, unknown>>>;
  /** Outputs of other stacks, by stack name, for `StackReference`s. */
  readonly stackOutputs?: Readonly<Record<string, Record<string, unknown>>>;
  /** Also receives every resource as it reaches the engine: what a run that fails registered. */
  readonly registered?: ResourceRecord[];
}

export interface MockRunResult<T> {
  readonly resources: ResourceRecord[];
  readonly outputs: T;
  /**
   * The transform functions registered on each resource, in order, by `type::name`: the mock engine never calls
   * them, so whoever renders a chart's objects applies them as the real engine would (stacks/stack-objects.ts).
   */
  readonly transforms: ReadonlyMap<string, pulumi.ResourceTransform[]>;
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
  const seeded = (length: number) => {
    const seed = `${type}::${name}::${JSON.stringify(inputs.keepers ?? {})}`;
    let bytes = Buffer.alloc(0);
    for (let i = 0; bytes.length < length; i++) bytes = Buffer.concat([bytes, createHash("sha256").update(`${seed}::${i}`).digest()]);
    return bytes.subarray(0, length);
  };
  if (type === "random:index/randomBytes:RandomBytes") {
    const bytes = seeded(Number(inputs.length ?? 32));
    return { base64: bytes.toString("base64"), hex: bytes.toString("hex") };
  }
  if (type === "random:index/randomPassword:RandomPassword") {
    // Alphanumeric, as `special: false` asks (the provider marks `result` secret; the program wraps it too).
    const length = Number(inputs.length ?? 16);
    return { result: seeded(length * 2).toString("base64").replace(/[^A-Za-z0-9]/g, "").slice(0, length).padEnd(length, "x") };
  }
  return {};
}

/**
 * Installs the mocks with the given configuration, runs `program`, waits until every registration has reached the
 * (mock) engine and returns what was declared. Resources get their inputs back as state, plus an id, for
 * Kubernetes objects a `metadata.name` (the provider would auto-name them), and `computedOutputs`.
 */
export async function runWithMocks<T>(program: () => T | Promise<T>, opts: MockRunOptions): Promise<MockRunResult<T>> {
  const resources: ResourceRecord[] = [];
  // The mock hook does not see the options; the register request does. Keyed by type+name (unique per program).
  const requests = new Map<string, RecordedOptions>();
  // A transform reaches the register request as a callback token; the function behind each token is kept here.
  const transformByToken = new Map<string, pulumi.ResourceTransform>();
  const transforms = new Map<string, pulumi.ResourceTransform[]>();
  const registerTransform = CallbackServer.prototype.registerTransform;
  CallbackServer.prototype.registerTransform = async function (this: CallbackServer, transform: pulumi.ResourceTransform) {
    const callback = await registerTransform.call(this, transform);
    transformByToken.set(callback.getToken(), transform);
    return callback;
  };
  // What the engine would refuse (e.g. a default provider that the stack disabled), reported after the run.
  const failures: string[] = [];
  const disabledDefaults = disabledDefaultProviders(opts.config);
  pulumi.runtime.setAllConfig({ ...opts.config }, [...(opts.secretKeys ?? [])]);
  await pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs) {
        const record: ResourceRecord = {
          type: args.type,
          name: args.name,
          inputs: args.inputs,
          custom: args.custom ?? true,
          ...(requests.get(`${args.type}::${args.name}`) ?? { dependsOn: [], retainOnDelete: false, transforms: 0, ignoreChanges: [], read: false }),
        };
        resources.push(record);
        opts.registered?.push(record);
        if (args.type === "pulumi:pulumi:StackReference") {
          const stack = String(args.inputs.name);
          const outputs = opts.stackOutputs?.[stack];
          if (!outputs) throw new Error(`unknown stack ${stack}`);
          return { id: stack, state: { name: stack, outputs, secretOutputNames: [] } };
        }
        const existing = args.id !== undefined ? opts.existingObjects?.[args.id] : undefined;
        const state: Record<string, unknown> = { ...args.inputs, ...computedOutputs(args.type, args.name, args.inputs), ...existing };
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
    registerResource(req: RegisterRequest, cb: Callback): unknown;
    readResource(req: ReadRequest, cb: Callback): unknown;
  };
  // Nor does it answer stack transforms (the entry point registers one: provider-guard.ts): accepted, never called,
  // as it calls no resource transform either.
  (monitor as unknown as { registerStackTransform(req: unknown, cb: (err: Error | null, res: unknown) => void): void }).registerStackTransform = (_req, cb) => cb(null, {});
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    const type = req.getType();
    const provider = providerName(req.getProvider());
    const t = req.getCustomtimeouts();
    const fns = (req.getTransformsList() as { getToken(): string }[]).map((c) => transformByToken.get(c.getToken()));
    transforms.set(`${type}::${req.getName()}`, fns.filter((f): f is pulumi.ResourceTransform => f !== undefined));
    requests.set(`${type}::${req.getName()}`, {
      dependsOn: req.getDependenciesList().map(urnName),
      retainOnDelete: req.getRetainondelete() ?? false,
      transforms: req.getTransformsList().length,
      provider,
      customTimeouts: t ? dropEmpty({ create: t.getCreate(), update: t.getUpdate(), delete: t.getDelete() }) : undefined,
      ignoreChanges: req.getIgnorechangesList(),
      deleteBeforeReplace: req.getDeletebeforereplacedefined() ? req.getDeletebeforereplace() : undefined,
      read: false,
    });
    const pkg = type.split(":")[0] ?? "";
    if ((req.getCustom() || req.getRemote()) && !type.startsWith("pulumi:") && provider === undefined && disabledDefaults.has(pkg)) {
      // The engine's own refusal when `pulumi:disable-default-providers` lists the package. Recorded, and the run
      // fails at its end: failing the RPC here would surface as an unhandled rejection inside the SDK instead.
      failures.push(`Default provider for '${pkg}' disabled. '${type}::${req.getName()}' must use an explicit provider.`);
    }
    return register(req, cb);
  };
  const read = monitor.readResource.bind(monitor);
  monitor.readResource = (req, cb) => {
    requests.set(`${req.getType()}::${req.getName()}`, {
      dependsOn: req.getDependenciesList().map(urnName),
      retainOnDelete: false,
      transforms: 0,
      provider: providerName(req.getProvider()),
      ignoreChanges: [],
      read: true,
    });
    if (opts.absentObjects?.includes(req.getId())) {
      // What pulumi-kubernetes answers for a read of an object the cluster does not have (see the note above).
      failures.push(`${req.getType()} (${req.getName()}): Preview failed: resource '${req.getId()}' does not exist`);
    }
    return read(req, cb);
  };
  resetClusterChecks();
  let outputs: T;
  try {
    outputs = await program();
    // As the entry point does (stacks/index.ts): checks of what the program read from the cluster fail the run.
    await settleClusterChecks();
  } finally {
    // Drain the RPC queue: registrations made inside applies land before we read `resources`.
    await pulumi.runtime.disconnect();
    CallbackServer.prototype.registerTransform = registerTransform;
  }
  if (failures.length > 0) throw new MockEngineError(failures);
  return { resources, outputs, transforms };
}

/** What the (mock) engine refused; the message is what `pulumi preview` would print. */
export class MockEngineError extends Error {
  constructor(readonly failures: readonly string[]) {
    super(failures.join("\n"));
    this.name = "MockEngineError";
  }
}

/** Packages listed in the stack setting `pulumi:disable-default-providers` (JSON list; `*` = all). */
function disabledDefaultProviders(config: Record<string, string>): { has(pkg: string): boolean } {
  const raw = config["pulumi:disable-default-providers"];
  const list = raw ? (JSON.parse(raw) as string[]) : [];
  return { has: (pkg) => list.includes(pkg) || list.includes("*") };
}

/** `urn:pulumi:stack::project::type::name` → name. */
function urnName(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/** A provider reference is `<urn>::<id>`; an empty reference means the default provider. */
function providerName(ref: string): string | undefined {
  if (!ref) return undefined;
  const urn = ref.slice(0, ref.lastIndexOf("::"));
  return urnName(urn);
}

function dropEmpty<T extends Record<string, string>>(o: T): Partial<T> | undefined {
  const kept = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== "")) as Partial<T>;
  return Object.keys(kept).length > 0 ? kept : undefined;
}
