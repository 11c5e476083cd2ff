// A real Kubernetes API server on loopback for the tests that ask whether a cluster accepts what the program renders:
// etcd and kube-apiserver started from binaries the machine has (nothing is downloaded or built here), with only what
// a plain API server needs: a service-account signing key made at start, one static bearer token in the
// system:masters group, RBAC, its own self-signed serving certificate. No controller-manager or scheduler runs.
//
// Binaries: $KUBE_APISERVER and $ETCD, else `kube-apiserver` and `etcd` on PATH. Where one is missing, a suite
// declared with `describeWithApiServer` is skipped and its title says which and how to get it (docs/development.md).
import { type ChildProcess, spawn, spawnSync } from "child_process";
import { generateKeyPairSync, randomBytes } from "crypto";
import { once } from "events";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { request } from "undici";
import { freePort } from "../../scripts/lib/processes";
import { KubeApi } from "./kube-api";

/** The environment variables naming the binaries (else PATH). */
export const APISERVER_ENV = { kubeApiserver: "KUBE_APISERVER", etcd: "ETCD" } as const;

/** How each binary is obtained on a development machine (docs/development.md, "A real API server"). */
const HOW_TO_GET = {
  kubeApiserver: "build cmd/kube-apiserver from a Kubernetes source tree (1.34 or newer) and set KUBE_APISERVER",
  etcd: "apt-get install etcd-server (3.5 or newer), or set ETCD",
} as const;

function versionOf(bin: string): string | undefined {
  const r = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim().split("\n")[0] : undefined;
}

function onPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

export interface ApiServerBinaries {
  readonly kubeApiserver: string;
  readonly etcd: string;
}

/** The binaries that run, or what is missing (one line per binary, saying how to get it). */
export function findApiServerBinaries(env: NodeJS.ProcessEnv = process.env): { binaries?: ApiServerBinaries; missing: string[] } {
  const found: Partial<Record<keyof typeof APISERVER_ENV, string>> = {};
  const missing: string[] = [];
  for (const key of ["kubeApiserver", "etcd"] as const) {
    const given = env[APISERVER_ENV[key]];
    const bin = given || onPath(key === "kubeApiserver" ? "kube-apiserver" : "etcd", env.PATH ?? "");
    if (bin && versionOf(bin)) found[key] = bin;
    else missing.push(given ? `${APISERVER_ENV[key]}=${given} does not run` : `no ${key === "kubeApiserver" ? "kube-apiserver" : "etcd"} (${HOW_TO_GET[key]})`);
  }
  return missing.length === 0 ? { binaries: found as ApiServerBinaries, missing } : { missing };
}

/**
 * `describe` when etcd and kube-apiserver are at hand, else one skipped block whose title names what is missing, so
 * a run without them is visibly incomplete rather than silently green (CI has neither: it skips).
 */
export function describeWithApiServer(name: string, fn: (binaries: ApiServerBinaries) => void): void {
  const { binaries, missing } = findApiServerBinaries();
  if (!binaries) {
    // jest prints no title of a file whose every test is skipped: the reason goes to the run's output as well.
    console.warn(`${name}: skipped, ${missing.join("; ")}`);
    describe.skip(`${name} — skipped, ${missing.join("; ")}`, () => test("applied to a real API server", () => undefined));
    return;
  }
  describe(name, () => fn(binaries));
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, "exit");
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Polls until `ready()` is true; throws with `what` and the process's log tail when `proc` exits or time runs out. */
async function waitFor(what: string, proc: ChildProcess, log: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${what} exited (${proc.exitCode ?? proc.signalCode}):\n${tail(log)}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs / 1000} s:\n${tail(log)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Starts `bin` with its stdout and stderr appended to `log` (the parent keeps no descriptor open). */
function spawnLogged(bin: string, args: string[], log: string): ChildProcess {
  const fd = fs.openSync(log, "a");
  try {
    return spawn(bin, args, { stdio: ["ignore", fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
}

function tail(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(-30).join("\n") : "";
}

export interface Etcd {
  readonly url: string;
  stop(): Promise<void>;
}

/** A throwaway etcd on loopback: its data in `dir`, no fsync (nothing here has to survive a crash). */
export async function startEtcd(bin: string, dir: string): Promise<Etcd> {
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const log = path.join(dir, "etcd.log");
  const peerUrl = `http://127.0.0.1:${peer}`;
  // prettier-ignore
  const args = [
    "--name", "test", "--data-dir", path.join(dir, "etcd"),
    "--listen-client-urls", url, "--advertise-client-urls", url,
    "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl, "--initial-cluster", `test=${peerUrl}`,
    "--unsafe-no-fsync", "--log-level", "warn",
  ];
  const proc = spawnLogged(bin, args, log);
  const healthy = async () => {
    const r = await request(`${url}/health`);
    return r.statusCode === 200 && (JSON.parse(await r.body.text()) as { health?: string }).health === "true";
  };
  await waitFor("etcd", proc, log, healthy, 60_000).catch(async (err: unknown) => {
    await stopProcess(proc);
    throw err;
  });
  return { url, stop: () => stopProcess(proc) };
}

export interface ApiServer {
  readonly api: KubeApi;
  /** The server's version as it reports it (`/version` gitVersion). */
  readonly version: string;
  /** What a client such as kubectl needs: the URL, the bearer token (system:masters), the serving certificate. */
  readonly credentials: { readonly url: string; readonly token: string; readonly ca: string };
  stop(): Promise<void>;
}

/**
 * A kube-apiserver on loopback over `etcd`, its state under `etcdPrefix` (so several servers can share one etcd and
 * each start empty). Waits for /readyz, which includes the bootstrap of RBAC roles and system priority classes.
 */
export async function startApiServer(bin: string, etcd: Etcd, etcdPrefix: string): Promise<ApiServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-apiserver-"));
  const port = await freePort();
  const token = randomBytes(24).toString("hex");
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, "sa.key"), privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  fs.writeFileSync(path.join(dir, "sa.pub"), publicKey.export({ type: "spki", format: "pem" }));
  const log = path.join(dir, "kube-apiserver.log");
  // prettier-ignore
  const args = [
    "--etcd-servers", etcd.url, "--etcd-prefix", etcdPrefix,
    "--bind-address", "127.0.0.1", "--secure-port", String(port), "--cert-dir", path.join(dir, "certs"),
    // The loopback address cannot be an endpoint of the `kubernetes` Service, and nothing here needs that Service.
    "--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
    "--service-cluster-ip-range", "10.96.0.0/16",
    "--token-auth-file", path.join(dir, "tokens.csv"), "--authorization-mode", "RBAC", "--anonymous-auth=false",
    "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
    "--service-account-key-file", path.join(dir, "sa.pub"), "--service-account-signing-key-file", path.join(dir, "sa.key"),
    // As kubeadm and the managed clusters run it: whether a privileged pod is admitted is then the namespace's Pod
    // Security level's call, as on those clusters (the default, false, refuses every privileged container outright).
    "--allow-privileged=true",
    "--profiling=false",
  ];
  const proc = spawnLogged(bin, args, log);
  const url = `https://127.0.0.1:${port}`;
  const cert = path.join(dir, "certs", "apiserver.crt");
  let api: KubeApi | undefined;
  let ca = "";
  const ready = async () => {
    if (!fs.existsSync(cert)) return false;
    // The self-signed certificate the server wrote at start, with its CA: the client verifies it (read again until
    // a request gets through, in case it was read half-written).
    const pem = api ? ca : fs.readFileSync(cert, "utf8");
    const client = api ?? new KubeApi(url, token, pem);
    try {
      const status = (await client.raw("GET", "/readyz")).status;
      api = client;
      ca = pem;
      return status === 200;
    } catch {
      if (client !== api) await client.close();
      return false;
    }
  };
  try {
    await waitFor("kube-apiserver", proc, log, ready, 180_000);
  } catch (err) {
    await api?.close();
    await stopProcess(proc);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const version = String(((await (api as KubeApi).raw("GET", "/version")).body as { gitVersion?: string }).gitVersion);
  return {
    api: api as KubeApi,
    version,
    credentials: { url, token, ca },
    stop: async () => {
      await (api as KubeApi).close();
      await stopProcess(proc);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
