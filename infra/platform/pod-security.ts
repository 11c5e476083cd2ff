// Pod Security admission on the namespaces the platform creates: the labels, and the Pod Security Standards' controls
// (Kubernetes documentation, "Pod Security Standards") as a check of a pod spec, so a render can be held to the level
// its namespace enforces without an API server. Each part picks its namespace's level beside its Namespace.
//
// warn and audit carry the enforced level, not a stricter one: enforce refuses only Pods, so a Deployment whose pods
// would be refused is accepted and then never gets a pod; warn checks workload templates too, so that case is printed
// when `pulumi up` applies the workload. A stricter warn would print, on every update, what the part cannot change.

/** From the most permissive to the strictest. */
export const POD_SECURITY_LEVELS = ["privileged", "baseline", "restricted"] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/**
 * The policy version the labels pin: the oldest Kubernetes the platform runs on (1.30, Kubernetes' `sleep` action).
 * A pinned version keeps what is admitted the same across cluster upgrades.
 */
export const POD_SECURITY_VERSION = "v1.30";

const MODES = ["enforce", "warn", "audit"] as const;
const PREFIX = "pod-security.kubernetes.io";

/** The label keys a namespace's Pod Security admission reads. */
export const POD_SECURITY_LABEL_KEYS: readonly string[] = MODES.flatMap((m) => [`${PREFIX}/${m}`, `${PREFIX}/${m}-version`]);

/** The Pod Security labels of a namespace enforcing `level` (warn and audit at the same level, see above). */
export function podSecurityLabels(level: PodSecurityLevel): Record<string, string> {
  return Object.fromEntries(MODES.flatMap((m) => [[`${PREFIX}/${m}`, level], [`${PREFIX}/${m}-version`, POD_SECURITY_VERSION]]));
}

/** The level a namespace's labels enforce (no label: privileged, as the admission plugin's default). */
export function enforcedLevel(labels: Readonly<Record<string, string>> | undefined): PodSecurityLevel {
  const level = labels?.[`${PREFIX}/enforce`];
  return (POD_SECURITY_LEVELS as readonly string[]).includes(level ?? "") ? (level as PodSecurityLevel) : "privileged";
}

// ---- The controls. Fields as in the API; only what a control reads is typed.

type SecurityContext = {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  procMount?: string;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type?: string };
  appArmorProfile?: { type?: string };
  seLinuxOptions?: { type?: string; user?: string; role?: string };
  windowsOptions?: { hostProcess?: boolean };
  sysctls?: { name: string }[];
};
type Container = { name: string; securityContext?: SecurityContext; ports?: { hostPort?: number }[] };
export interface PodSpecUnderCheck {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContext;
  volumes?: Record<string, unknown>[];
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
}

export interface Violation {
  /** The control's name in the Kubernetes documentation. */
  readonly control: string;
  readonly detail: string;
}

const BASELINE_CAPABILITIES = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
/** As of the pinned policy version, v1.30 (`container_engine_t` is allowed from v1.31 only). */
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t"]);
const RESTRICTED_VOLUMES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]);
const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

function containersOf(spec: PodSpecUnderCheck): Container[] {
  return [...(spec.initContainers ?? []), ...spec.containers, ...(spec.ephemeralContainers ?? [])];
}

/** The Baseline policy's controls. */
function baseline(spec: PodSpecUnderCheck, annotations: Readonly<Record<string, string>>): Violation[] {
  const out: Violation[] = [];
  const v = (control: string, detail: string) => out.push({ control, detail });
  const pod = spec.securityContext ?? {};
  const containers = containersOf(spec);
  const contexts: [string, SecurityContext][] = [["pod", pod], ...containers.map((c): [string, SecurityContext] => [`container ${c.name}`, c.securityContext ?? {}])];
  for (const [where, sc] of contexts) {
    if (sc.windowsOptions?.hostProcess) v("HostProcess", `${where}: windowsOptions.hostProcess`);
    if (sc.appArmorProfile?.type !== undefined && !["RuntimeDefault", "Localhost"].includes(sc.appArmorProfile.type)) v("AppArmor", `${where}: appArmorProfile ${sc.appArmorProfile.type}`);
    const se = sc.seLinuxOptions;
    if (se && (!SELINUX_TYPES.has(se.type ?? "") || se.user || se.role)) v("SELinux", `${where}: seLinuxOptions ${JSON.stringify(se)}`);
    if (sc.seccompProfile?.type === "Unconfined") v("Seccomp", `${where}: seccompProfile Unconfined`);
  }
  for (const ns of ["hostNetwork", "hostPID", "hostIPC"] as const) if (spec[ns]) v("Host Namespaces", ns);
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) v("Privileged Containers", `container ${c.name}`);
    const added = (sc.capabilities?.add ?? []).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    if (added.length > 0) v("Capabilities", `container ${c.name} adds ${added.join(", ")}`);
    if (sc.procMount !== undefined && sc.procMount !== "Default") v("/proc Mount Type", `container ${c.name}: ${sc.procMount}`);
    for (const p of c.ports ?? []) if (p.hostPort) v("Host Ports", `container ${c.name}: hostPort ${p.hostPort}`);
  }
  for (const vol of spec.volumes ?? []) if (vol.hostPath !== undefined) v("HostPath Volumes", `volume ${String(vol.name)}`);
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith(APPARMOR_ANNOTATION) && value !== "" && value !== "runtime/default" && !value.startsWith("localhost/")) v("AppArmor", `annotation ${key}: ${value}`);
  }
  for (const s of pod.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) v("Sysctls", s.name);
  return out;
}

/** The Restricted policy's own controls (on top of Baseline's). */
function restricted(spec: PodSpecUnderCheck): Violation[] {
  const out: Violation[] = [];
  const v = (control: string, detail: string) => out.push({ control, detail });
  const pod = spec.securityContext ?? {};
  for (const vol of spec.volumes ?? []) {
    const kinds = Object.keys(vol).filter((k) => k !== "name");
    const refused = kinds.filter((k) => !RESTRICTED_VOLUMES.has(k));
    if (refused.length > 0) v("Volume Types", `volume ${String(vol.name)}: ${refused.join(", ")}`);
  }
  if (pod.runAsUser === 0) v("Running as Non-root user", "pod: runAsUser 0");
  // An explicit false on the pod is refused whatever its containers say.
  if (pod.runAsNonRoot === false) v("Running as Non-root", "pod: runAsNonRoot false");
  for (const c of containersOf(spec)) {
    const sc = c.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false) v("Privilege Escalation", `container ${c.name}: allowPrivilegeEscalation not false`);
    const nonRoot = sc.runAsNonRoot ?? pod.runAsNonRoot;
    if (nonRoot !== true) v("Running as Non-root", `container ${c.name}: runAsNonRoot not true`);
    if (sc.runAsUser === 0) v("Running as Non-root user", `container ${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") v("Seccomp", `container ${c.name}: seccompProfile ${seccomp ?? "unset"}`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) v("Capabilities", `container ${c.name}: does not drop ALL`);
    const added = (sc.capabilities?.add ?? []).filter((cap) => cap !== "NET_BIND_SERVICE");
    if (added.length > 0) v("Capabilities", `container ${c.name} adds ${added.join(", ")}`);
  }
  return out;
}

/** What a pod (spec and annotations) violates at `level`; empty when the level admits it. */
export function podSecurityViolations(level: PodSecurityLevel, spec: PodSpecUnderCheck, annotations: Readonly<Record<string, string>> = {}): Violation[] {
  if (level === "privileged") return [];
  return level === "baseline" ? baseline(spec, annotations) : [...baseline(spec, annotations), ...restricted(spec)];
}

/** The strictest level that admits the pod. */
export function strictestLevel(spec: PodSpecUnderCheck, annotations: Readonly<Record<string, string>> = {}): PodSecurityLevel {
  return [...POD_SECURITY_LEVELS].reverse().find((level) => podSecurityViolations(level, spec, annotations).length === 0) ?? "privileged";
}
