// Where the metrics server sends its alerts: Alertmanagers the operator already runs (`monitoring:alertmanagers`);
// the chart's bundled one stays off. The plain part (addresses, user name, TLS server name) becomes Prometheus'
// `alerting.alertmanagers` through the chart's `server.alertmanagers`. The sensitive part
// (`monitoring:alertmanagerCredentials`: passwords, bearer tokens, CA, client certificate and key) goes only into the
// Secret `metrics-alertmanager-auth`, which the server pod mounts; the configuration names its files with
// Prometheus' `*_file` fields, so no credential is in the chart values or the ConfigMap. Prometheus reads those files
// again on every request (passwords, tokens) or connection (certificates), so a Secret update needs no restart;
// the pod is rolled anyway on a change, so that a new target never meets a configuration whose files are not there yet.
import { z } from "zod";
import { type KeyIssue, SECRET_PRESENT, UNREADABLE_SECRET } from "../platform/config";
import { dnsLabel, dnsSubdomain, nonEmpty } from "../platform/schema-rules";

/** Where the credentials live in the cluster and in the server pod. */
export const ALERTMANAGER_AUTH = { secretName: "metrics-alertmanager-auth", volume: "alertmanager-auth", mountPath: "/etc/alertmanager-auth" } as const;

/** The sensitive parts of a target, as `monitoring:alertmanagerCredentials.<target>` holds them. */
export const CREDENTIAL_PARTS = ["password", "bearerToken", "ca", "cert", "key"] as const;
export type CredentialPart = (typeof CREDENTIAL_PARTS)[number];

/** File name of each part in the Secret (and so under the mount path), after the target's name. */
const FILE_SUFFIX: Readonly<Record<CredentialPart, string>> = { password: "password", bearerToken: "bearer-token", ca: "ca.crt", cert: "tls.crt", key: "tls.key" };

/** Key of a target's part in the Secret. */
export function credentialFileKey(target: string, part: CredentialPart): string {
  return `${target}-${FILE_SUFFIX[part]}`;
}

const alertmanagerUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://alertmanager.example.com:9093" })
  .refine((raw) => {
    const u = new URL(raw);
    return u.username === "" && u.password === "" && u.search === "" && u.hash === "";
  }, "must carry no user, password, query or fragment (credentials go in monitoring:alertmanagerCredentials)");

const scheme = (url: string) => (URL.canParse(url) ? new URL(url).protocol.slice(0, -1) : "");
/** The path prefix Prometheus puts before `/api/v2/alerts` (none for `/`). */
const pathPrefix = (url: string) => (URL.canParse(url) ? new URL(url).pathname.replace(/\/+$/, "") : "");

export const alertmanagerTargetSchema = z.strictObject({
  name: dnsLabel,
  urls: z
    .array(alertmanagerUrl)
    .min(1, "must list at least one URL")
    // One Prometheus alertmanager_config: one scheme, one path prefix, the same credentials for every replica.
    .refine((urls) => new Set(urls.map(scheme)).size <= 1 && new Set(urls.map(pathPrefix)).size <= 1, "must share one scheme and one path (the replicas of one Alertmanager cluster); list another target otherwise"),
  // What the target uses is declared here, in plain text; the values are in alertmanagerCredentials.
  basicAuthUser: nonEmpty.optional(),
  bearerToken: z.boolean().optional(),
  tls: z
    .strictObject({
      ca: z.boolean().optional(),
      clientCertificate: z.boolean().optional(),
      serverName: dnsSubdomain.optional(),
      insecureSkipVerify: z.boolean().optional(),
    })
    .optional(),
});
export type AlertmanagerTargetInput = z.infer<typeof alertmanagerTargetSchema>;

export const alertmanagersSchema = z
  .array(alertmanagerTargetSchema)
  .min(1, "must list at least one target (or leave the key out)")
  .refine((list) => new Set(list.map((t) => t.name)).size === list.length, "must not name two targets alike");

/** The sensitive parts a target declares it uses. */
export function declaredParts(t: AlertmanagerTargetInput): CredentialPart[] {
  return [
    ...(t.basicAuthUser !== undefined ? (["password"] as const) : []),
    ...(t.bearerToken ? (["bearerToken"] as const) : []),
    ...(t.tls?.ca ? (["ca"] as const) : []),
    ...(t.tls?.clientCertificate ? (["cert", "key"] as const) : []),
  ];
}

/** Where each part is declared, for messages. */
const DECLARED_BY: Readonly<Record<CredentialPart, string>> = { password: "basicAuthUser", bearerToken: "bearerToken: true", ca: "tls.ca: true", cert: "tls.clientCertificate: true", key: "tls.clientCertificate: true" };

/** A PEM block's first line, as Prometheus' TLS loader wants the CA and client certificate and key. */
const PEM = { ca: /-----BEGIN CERTIFICATE-----/, cert: /-----BEGIN CERTIFICATE-----/, key: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ } as const;
/** What a malformed PEM value is replaced with before validation (never the value itself). */
const NOT_PEM = "<not PEM>";

const pemPresence = (what: string) => z.literal(SECRET_PRESENT, { error: `must be the PEM text of ${what} (-----BEGIN …), not a path` });
const secretString = z.literal(SECRET_PRESENT, { error: "must be a string" });

export const alertmanagerCredentialsSchema = z.record(
  dnsLabel,
  z.strictObject(
    {
      password: secretString.optional(),
      bearerToken: secretString.optional(),
      ca: pemPresence("a CA certificate").optional(),
      cert: pemPresence("a client certificate").optional(),
      key: pemPresence("a client private key").optional(),
    },
    { error: (issue) => (issue.code === "invalid_type" ? "must be an object {password?, bearerToken?, ca?, cert?, key?}" : undefined) },
  ),
  { error: (issue) => (issue.code === "invalid_type" ? 'must be a JSON object of targets: {"<target name>": {password?, bearerToken?, ca?, cert?, key?}}' : undefined) },
);

export type AlertmanagerCredentialsPresence = z.infer<typeof alertmanagerCredentialsSchema>;

/**
 * The raw secret (JSON) as its schema takes it: every value replaced by SECRET_PRESENT, or by a marker the schema
 * refuses where a PEM part is not PEM, so that neither validation nor its messages ever see a credential. A secret
 * that could not be read (the offline render) is taken to hold what the targets (`alertmanagers`, raw) declare.
 */
export function credentialsPresence(raw: string | undefined, targets: unknown): unknown {
  if (raw === undefined || raw === "") return undefined;
  if (raw === UNREADABLE_SECRET) {
    if (targets === undefined) return undefined; // the render's stand-in for a secret this stack does not use
    const parsed = alertmanagersSchema.safeParse(targets);
    return parsed.success ? Object.fromEntries(parsed.data.map((t) => [t.name, Object.fromEntries(declaredParts(t).map((p) => [p, SECRET_PRESENT]))])) : {};
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(raw);
  } catch {
    return "<not JSON>";
  }
  if (decoded === null || typeof decoded !== "object" || Array.isArray(decoded)) return "<not an object>";
  return Object.fromEntries(
    Object.entries(decoded as Record<string, unknown>).map(([target, parts]) => {
      if (parts === null || typeof parts !== "object" || Array.isArray(parts)) return [target, "<not an object>"];
      const masked = Object.entries(parts as Record<string, unknown>).flatMap(([part, value]) => {
        if (typeof value !== "string") return [[part, typeof value]];
        if (value === "") return [];
        const pem = PEM[part as keyof typeof PEM];
        return [[part, pem && !pem.test(value) ? NOT_PEM : SECRET_PRESENT]];
      });
      return [target, Object.fromEntries(masked)];
    }),
  );
}

/** A validated target: its plain settings and the sensitive parts it uses. */
export interface AlertmanagerTarget {
  readonly name: string;
  readonly urls: readonly string[];
  readonly basicAuthUser?: string;
  readonly tls?: { readonly serverName?: string; readonly insecureSkipVerify?: boolean };
  readonly credentials: ReadonlySet<CredentialPart>;
}

/** The combinations the two keys cannot work in, each on the key to change. */
export function alertmanagerIssues(targets: readonly AlertmanagerTargetInput[], credentials: AlertmanagerCredentialsPresence | undefined): KeyIssue[] {
  const issues: KeyIssue[] = [];
  targets.forEach((t, i) => {
    const at = (...rest: (string | number)[]) => ["alertmanagers", i, ...rest];
    if (t.basicAuthUser !== undefined && t.bearerToken) issues.push({ path: at(), message: "sets basicAuthUser and bearerToken: a target authenticates with basic auth or a bearer token, not both" });
    if (t.tls?.insecureSkipVerify && t.tls.ca) issues.push({ path: at("tls"), message: "sets ca and insecureSkipVerify: verify the server with the CA, or skip verification, not both" });
    const plain = t.urls.length > 0 && t.urls.every((u) => scheme(u) === "http");
    if (plain && (declaredParts(t).length > 0 || t.tls !== undefined)) {
      issues.push({ path: at("urls"), message: "must be https: over http the credentials would travel in clear, and TLS settings apply to nothing" });
    }
  });
  const declaring = targets.filter((t) => declaredParts(t).length > 0).map((t) => t.name);
  if (credentials === undefined) {
    if (declaring.length > 0) issues.push({ path: ["alertmanagerCredentials"], message: `required: ${declaring.join(", ")} use credentials (pulumi config set --secret monitoring:alertmanagerCredentials …)` });
    return issues;
  }
  const byName = new Map(targets.map((t) => [t.name, t]));
  for (const [name, parts] of Object.entries(credentials)) {
    const t = byName.get(name);
    if (!t) {
      issues.push({ path: ["alertmanagerCredentials", name], message: `no target of monitoring:alertmanagers is named ${name}` });
      continue;
    }
    const declared = declaredParts(t);
    for (const part of CREDENTIAL_PARTS) {
      const has = parts[part] !== undefined;
      if (declared.includes(part) && !has) issues.push({ path: ["alertmanagerCredentials", name, part], message: `required: target ${name} sets ${DECLARED_BY[part]}` });
      if (!declared.includes(part) && has) issues.push({ path: ["alertmanagerCredentials", name, part], message: `not used: target ${name} would need ${DECLARED_BY[part]} in monitoring:alertmanagers` });
    }
  }
  for (const name of declaring.filter((n) => !(n in credentials))) {
    issues.push({ path: ["alertmanagerCredentials", name], message: `required: target ${name} uses ${declaredParts(byName.get(name) as AlertmanagerTargetInput).join(", ")}` });
  }
  return issues;
}

/** The validated targets, each with the parts it uses. */
export function alertmanagerTargets(targets: readonly AlertmanagerTargetInput[]): AlertmanagerTarget[] {
  return targets.map((t) => ({
    name: t.name,
    urls: t.urls,
    basicAuthUser: t.basicAuthUser,
    tls: t.tls && (t.tls.serverName !== undefined || t.tls.insecureSkipVerify !== undefined) ? { serverName: t.tls.serverName, insecureSkipVerify: t.tls.insecureSkipVerify } : undefined,
    credentials: new Set(declaredParts(t)),
  }));
}

/** `host:port`, with the scheme's port where the URL names none (Prometheus' static targets are addresses). */
function address(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
}

/** Prometheus `alertmanager_config` entries: the chart's `server.alertmanagers`, rendered as they are. */
export function prometheusAlertmanagerConfigs(targets: readonly AlertmanagerTarget[]): Record<string, unknown>[] {
  return targets.map((t) => {
    const first = t.urls[0] as string;
    const file = (part: CredentialPart) => `${ALERTMANAGER_AUTH.mountPath}/${credentialFileKey(t.name, part)}`;
    const has = (part: CredentialPart) => t.credentials.has(part);
    const tls = {
      ...(has("ca") ? { ca_file: file("ca") } : {}),
      ...(has("cert") ? { cert_file: file("cert"), key_file: file("key") } : {}),
      ...(t.tls?.serverName ? { server_name: t.tls.serverName } : {}),
      ...(t.tls?.insecureSkipVerify ? { insecure_skip_verify: true } : {}),
    };
    return {
      scheme: scheme(first),
      ...(pathPrefix(first) ? { path_prefix: pathPrefix(first) } : {}),
      static_configs: [{ targets: t.urls.map(address) }],
      ...(t.basicAuthUser !== undefined ? { basic_auth: { username: t.basicAuthUser, password_file: file("password") } } : {}),
      ...(has("bearerToken") ? { authorization: { type: "Bearer", credentials_file: file("bearerToken") } } : {}),
      ...(Object.keys(tls).length > 0 ? { tls_config: tls } : {}),
    };
  });
}

/**
 * The Secret's data (file name → content): the parts each target uses, from the decrypted
 * `alertmanagerCredentials` (validated before: every used part is there). Where the secret could not be read (the
 * offline render) each file holds that placeholder.
 */
export function credentialsSecretData(targets: readonly AlertmanagerTarget[], raw: string): Record<string, string> {
  const values = raw === UNREADABLE_SECRET ? undefined : (JSON.parse(raw) as Record<string, Record<string, unknown>>);
  const data: Record<string, string> = {};
  for (const t of targets) {
    for (const part of t.credentials) {
      const value = values === undefined ? UNREADABLE_SECRET : values[t.name]?.[part];
      if (typeof value !== "string" || value === "") throw new Error(`monitoring:alertmanagerCredentials: ${t.name}.${part} is missing`);
      data[credentialFileKey(t.name, part)] = value;
    }
  }
  return data;
}

/** True when any target has a sensitive part, i.e. the Secret and its mount exist. */
export function needsCredentialsSecret(targets: readonly AlertmanagerTarget[]): boolean {
  return targets.some((t) => t.credentials.size > 0);
}
