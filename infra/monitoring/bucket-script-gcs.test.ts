// The bucket Job's Cloud Storage script (objectStore gcs), run for real with curl against a local test double of the
// two Google endpoints it calls: the GKE metadata server (token, project id) and Cloud Storage's JSON API
// (buckets.get, buckets.insert). Neither can run here; the double answers as Google documents them (paths, headers,
// status codes and error bodies, listed in docs/development.md). In CI (CI set) a missing curl fails the suite.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { exec, type Exited, freePort } from "../platform/script-testing";
import { BUCKET_SCRIPTS, buildBucketJobSpec } from "./bucket-job";

const CURL = spawnSync("sh", ["-c", "command -v curl"], { encoding: "utf8" }).status === 0;
if (!CURL && process.env.CI) throw new Error("bucket-script-gcs.test: curl (Debian package curl) is required in CI; add it to .ci/apt-packages");
if (!CURL) console.warn("bucket-script-gcs.test: SKIPPED — curl is not installed (apt-get install curl)");
const describeIfCurl = CURL ? describe : describe.skip;

const TOKEN = "ya29.test-token-Qm7vX2pL";
const PROJECT = "ai-platform-prod";

interface Request {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Google's JSON API error body. */
function googleError(res: http.ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { "Content-Type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify({ error: { code, message, errors: [{ message, domain: "global", reason }] } }));
}

/**
 * The metadata server and Cloud Storage as the script sees them. `buckets` are the project's own; `foreign` belong to
 * another project (buckets.get: 403); `denyGet` makes the service account lack storage.buckets.get;
 * `createdByOthers` are created by someone else right after the first buckets.get that misses them (a race).
 */
class GoogleDouble {
  readonly requests: Request[] = [];
  readonly buckets = new Map<string, Record<string, unknown>>();
  readonly foreign = new Set<string>();
  readonly createdByOthers = new Set<string>();
  denyGet = false;
  private server = http.createServer((req, res) => this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://double");
      this.requests.push({ method: req.method ?? "", path: `${url.pathname}${url.search}`, headers: req.headers, body });
      if (url.pathname.startsWith("/computeMetadata/v1/")) return this.metadata(req, res, url.pathname.slice("/computeMetadata/v1/".length));
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return googleError(res, 401, "required", "Login Required");
      const get = /^\/storage\/v1\/b\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && get) return this.getBucket(res, decodeURIComponent(get[1] as string));
      if (req.method === "POST" && url.pathname === "/storage/v1/b") return this.insertBucket(res, url.searchParams.get("project"), body);
      googleError(res, 404, "notFound", "Not Found");
    });
  }

  private metadata(req: http.IncomingMessage, res: http.ServerResponse, key: string): void {
    // The metadata server refuses requests without the header (a guard against request forgery).
    if (req.headers["metadata-flavor"] !== "Google") {
      res.writeHead(403, { "Content-Type": "text/html" });
      return void res.end("Missing Metadata-Flavor:Google header.");
    }
    res.setHeader("Metadata-Flavor", "Google");
    if (key === "instance/service-accounts/default/token") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return void res.end(JSON.stringify({ access_token: TOKEN, expires_in: 3599, token_type: "Bearer" }));
    }
    if (key === "project/project-id") {
      res.writeHead(200, { "Content-Type": "application/text" });
      return void res.end(PROJECT);
    }
    res.writeHead(404, { "Content-Type": "text/html" });
    res.end("Not Found");
  }

  private getBucket(res: http.ServerResponse, name: string): void {
    if (this.denyGet || this.foreign.has(name)) {
      return googleError(res, 403, "forbidden", `logstore-bucket-job@${PROJECT}.iam.gserviceaccount.com does not have storage.buckets.get access to the Google Cloud Storage bucket. Permission 'storage.buckets.get' denied on resource (or it may not exist).`);
    }
    const bucket = this.buckets.get(name);
    if (!bucket) {
      if (this.createdByOthers.delete(name)) this.buckets.set(name, { kind: "storage#bucket", name, location: "US" });
      return googleError(res, 404, "notFound", "The specified bucket does not exist.");
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(bucket));
  }

  private insertBucket(res: http.ServerResponse, project: string | null, body: string): void {
    if (!project) return googleError(res, 400, "required", "Required parameter: project");
    const resource = JSON.parse(body) as Record<string, unknown>;
    const name = String(resource.name);
    if (this.buckets.has(name)) return googleError(res, 409, "conflict", "Your previous request to create the named bucket succeeded and you already own it.");
    if (this.foreign.has(name)) return googleError(res, 409, "conflict", "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.");
    const created = { kind: "storage#bucket", ...resource, location: String(resource.location).toUpperCase(), projectNumber: "123456789012" };
    this.buckets.set(name, created);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(created));
  }
}

describeIfCurl("create-bucket-gcs.sh against a double of the GKE metadata server and Cloud Storage's JSON API", () => {
  let google: GoogleDouble;
  let host: string;
  let dir: string;

  beforeAll(async () => {
    google = new GoogleDouble();
    host = await google.start();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "bucket-gcs-test-"));
  });
  afterAll(async () => {
    await google.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    google.requests.length = 0;
    google.denyGet = false;
  });

  /** The environment the Job gives the script, with the two Google endpoints pointed at the double. */
  function jobEnv(bucket: string, location: string): Record<string, string> {
    const spec = buildBucketJobSpec({ image: "curl", bucket, target: { store: "gcs", location, serviceAccountName: "sa" }, scriptConfigMapName: "c", fixedUserIds: true });
    const env = spec.template.spec.containers[0]?.env ?? [];
    const values = Object.fromEntries(env.flatMap((e) => ("value" in e && e.value !== undefined ? [[e.name, e.value]] : [])));
    return { ...values, HOME: dir, RETRY_DELAY_SECONDS: "0", GCE_METADATA_HOST: host, GCS_ENDPOINT: `http://${host}` };
  }

  async function run(env: Record<string, string>): Promise<Exited & { calls: string[] }> {
    const r = await exec("sh", [BUCKET_SCRIPTS.gcs.path], { PATH: process.env.PATH ?? "", ...env }, 60_000);
    return { ...r, calls: google.requests.map((q) => `${q.method} ${q.path}`) };
  }

  const TOKEN_CALL = "GET /computeMetadata/v1/instance/service-accounts/default/token";

  test("an existing bucket: buckets.get answers 200, nothing is created", async () => {
    google.buckets.set("logs-there", { kind: "storage#bucket", name: "logs-there" });
    const r = await run(jobEnv("logs-there", "europe-west1"));
    expect({ status: r.status, calls: r.calls }).toEqual({ status: 0, calls: [TOKEN_CALL, "GET /storage/v1/b/logs-there"] });
    expect(r.stdout).toContain("bucket logs-there exists (attempt 1/5): nothing to do");
  });

  test("a missing bucket: 404, then buckets.insert in the metadata server's project, at the location, IAM only and never public", async () => {
    const r = await run(jobEnv("logs-new", "europe-west1"));
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    expect(r.calls).toEqual([TOKEN_CALL, "GET /storage/v1/b/logs-new", "GET /computeMetadata/v1/project/project-id", `POST /storage/v1/b?project=${PROJECT}`]);
    const insert = google.requests[3] as Request;
    expect(insert.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(insert.body)).toEqual({ name: "logs-new", location: "europe-west1", iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: "enforced" } });
    expect(r.stdout).toContain(`bucket logs-new created in europe-west1, project ${PROJECT} (attempt 1/5)`);
    expect(google.buckets.get("logs-new")).toMatchObject({ location: "EUROPE-WEST1" });
    // A second run is the no-op case.
    google.requests.length = 0;
    expect((await run(jobEnv("logs-new", "europe-west1"))).calls).toEqual([TOKEN_CALL, "GET /storage/v1/b/logs-new"]);
  });

  test("the token: asked for with Metadata-Flavor: Google, sent as a Bearer token, never printed", async () => {
    const r = await run(jobEnv("logs-token", "eu"));
    expect(r.status).toBe(0);
    for (const q of google.requests) {
      if (q.path.startsWith("/computeMetadata/")) expect({ path: q.path, flavor: q.headers["metadata-flavor"], auth: q.headers.authorization }).toEqual({ path: q.path, flavor: "Google", auth: undefined });
      else expect({ path: q.path, auth: q.headers.authorization }).toEqual({ path: q.path, auth: `Bearer ${TOKEN}` });
    }
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  test("created by someone else between the get and the insert: 409, and the next attempt finds it", async () => {
    google.createdByOthers.add("logs-race");
    const r = await run(jobEnv("logs-race", "eu"));
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("409 on buckets.insert: the name logs-race is taken (bucket names are global): Your previous request to create the named bucket succeeded");
    expect(r.stderr).toContain("attempt 1/5 failed");
    expect(r.stdout).toContain("bucket logs-race exists (attempt 2/5): nothing to do");
  });

  test("no storage.buckets.get (or another project's bucket): 403 on every attempt, Google's reason printed, then the script fails", async () => {
    google.denyGet = true;
    const r = await run({ ...jobEnv("logs-denied", "eu"), ATTEMPTS: "2" });
    expect(r.status).toBe(1);
    expect(r.calls).toEqual([TOKEN_CALL, "GET /storage/v1/b/logs-denied", TOKEN_CALL, "GET /storage/v1/b/logs-denied"]);
    expect(r.stderr).toContain("403 on buckets.get: the service account lacks storage.buckets.get, or another project owns logs-denied: logstore-bucket-job@");
    expect(r.stderr).toContain("giving up on bucket logs-denied after 2 attempts");
  });

  test("a name another project owns: 403, never created", async () => {
    google.foreign.add("logs-theirs");
    const r = await run({ ...jobEnv("logs-theirs", "eu"), ATTEMPTS: "1" });
    expect(r.status).toBe(1);
    expect(r.calls).not.toContain(`POST /storage/v1/b?project=${PROJECT}`);
  });

  test("no metadata server (Workload Identity off): 5 attempts, then the script fails", async () => {
    const closed = await freePort();
    const r = await run({ ...jobEnv("logs-nowhere", "eu"), GCE_METADATA_HOST: `127.0.0.1:${closed}` });
    expect(r.status).toBe(1);
    for (let i = 1; i <= 5; i++) expect(r.stderr).toContain(`attempt ${i}/5 failed`);
    expect(r.stderr).toContain("no token from the metadata server");
    expect(r.calls).toEqual([]);
  });

  test("a missing GCS_LOCATION is an immediate error, not a retry loop", async () => {
    const env = jobEnv("logs-x", "eu");
    delete env.GCS_LOCATION;
    const r = await run(env);
    expect(r.status).not.toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.stderr).toContain("GCS_LOCATION is required");
  });
});
