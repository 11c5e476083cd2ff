// The few Kubernetes API calls the real-API-server suite makes, over undici: discovery (which resource serves a kind,
// and whether it is namespaced), server-side apply with strict field validation, a dry-run create, reads. A client
// library was weighed: @kubernetes/client-node is ESM-only (jest here runs CommonJS) and its generic apply has no
// fieldValidation parameter, so these calls are made directly; the API's own semantics are in what the server answers.
import { Agent, request } from "undici";
import type { Manifest } from "./helm";

export type KubeObject = Manifest & { metadata: Manifest["metadata"] & { resourceVersion?: string; generation?: number; uid?: string } };

/** An answer the server refused: its status and its own message (a Status object's `message`). */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

export interface ResourceInfo {
  /** The URL segment of the resource (plural), e.g. `deployments`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** The field manager of every apply: one owner, so a second apply of the same object is the same owner's intent. */
export const FIELD_MANAGER = "ai-platform-apply-test";

export class KubeApi {
  private readonly agent: Agent;
  private readonly discovery = new Map<string, Map<string, ResourceInfo>>();

  constructor(
    readonly url: string,
    private readonly token: string,
    ca: string,
  ) {
    this.agent = new Agent({ connect: { ca } });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** One request; the parsed body (JSON) and status, whatever the status. */
  async raw(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown, contentType = "application/json"): Promise<{ status: number; body: unknown }> {
    const r = await request(`${this.url}${path}`, {
      method,
      dispatcher: this.agent,
      headers: { authorization: `Bearer ${this.token}`, accept: "application/json", ...(body !== undefined ? { "content-type": contentType } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* plain text (e.g. /readyz) */
    }
    return { status: r.statusCode, body: parsed };
  }

  private async call(method: "GET" | "POST" | "PATCH", path: string, body?: unknown, contentType?: string): Promise<KubeObject> {
    const r = await this.raw(method, path, body, contentType);
    if (r.status >= 200 && r.status < 300) return r.body as KubeObject;
    const status = r.body as { message?: string; reason?: string } | string;
    throw new KubeApiError(r.status, typeof status === "object" ? (status.reason ?? "") : "", typeof status === "object" ? (status.message ?? JSON.stringify(status)) : status);
  }

  /** Forgets what discovery said (after CRDs are added). */
  forgetDiscovery(): void {
    this.discovery.clear();
  }

  /** The resource serving `kind` in `apiVersion`, or undefined when the server does not serve it. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    let kinds = this.discovery.get(apiVersion);
    if (!kinds) {
      const r = await this.raw("GET", apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
      kinds = new Map();
      if (r.status === 200) {
        for (const res of (r.body as { resources: { name: string; kind: string; namespaced: boolean }[] }).resources) {
          if (!res.name.includes("/")) kinds.set(res.kind, { plural: res.name, namespaced: res.namespaced });
        }
      }
      this.discovery.set(apiVersion, kinds);
    }
    return kinds.get(kind);
  }

  /** The path of an object (or of its collection, without a name); throws for a kind the server does not serve. */
  async pathOf(obj: Pick<Manifest, "apiVersion" | "kind" | "metadata">, withName = true): Promise<string> {
    const info = await this.resourceFor(obj.apiVersion, obj.kind);
    if (!info) throw new KubeApiError(404, "NotFound", `the server does not serve ${obj.kind} in ${obj.apiVersion}`);
    const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
    const ns = info.namespaced ? `/namespaces/${encodeURIComponent(obj.metadata.namespace ?? "default")}` : "";
    return `${base}${ns}/${info.plural}${withName ? `/${encodeURIComponent(obj.metadata.name)}` : ""}`;
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`; JSON is YAML) with strict field validation: an unknown or
   * duplicated field is an error, not a warning. Returns the object as the server stores it (or would, dry-run).
   */
  async apply(obj: Manifest, opts: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const query = new URLSearchParams({ fieldManager: FIELD_MANAGER, fieldValidation: "Strict", force: "true", ...(opts.dryRun ? { dryRun: "All" } : {}) });
    return this.call("PATCH", `${await this.pathOf(obj)}?${query}`, obj, "application/apply-patch+yaml");
  }

  /** A create the server validates and admits but does not store (`dryRun=All`), strict field validation. */
  async createDryRun(obj: Manifest): Promise<KubeObject> {
    const query = new URLSearchParams({ fieldValidation: "Strict", dryRun: "All" });
    return this.call("POST", `${await this.pathOf(obj, false)}?${query}`, obj);
  }

  async get(obj: Pick<Manifest, "apiVersion" | "kind" | "metadata">): Promise<KubeObject> {
    return this.call("GET", await this.pathOf(obj));
  }

  /** Waits until a CustomResourceDefinition is Established (its kind is served). */
  async waitEstablished(crdName: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const crd = await this.get({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: crdName } });
      const conditions = ((crd as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []);
      if (conditions.some((c) => c.type === "Established" && c.status === "True")) return;
      if (Date.now() > deadline) throw new Error(`CRD ${crdName} not Established after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
