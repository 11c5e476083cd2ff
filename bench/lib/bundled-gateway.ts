import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IMAGE_NODE_FLAGS } from "../../gateway/src/config/memory-bound";
import { buildGateway, BUNDLE } from "../../scripts/build-gateway";
import { freePort, ROOT } from "../../scripts/lib/processes";

/** The Node version the image runs (gateway/Dockerfile's `ARG NODE_IMAGE`), as `v24.17.0`. */
export function imageNodeVersion(): string {
  const version = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)/m.exec(readFileSync(join(ROOT, "gateway", "Dockerfile"), "utf8"))?.[1];
  return version ? `v${version}` : "unknown";
}

/**
 * What the gateway under test runs on, for a benchmark's report: this process's Node (the gateway is started with
 * it) and the image's flags, and a warning when that Node is not the image's.
 */
export function gatewayRuntime(): string {
  const image = imageNodeVersion();
  const node = process.version === image ? `Node ${process.version} (the image's)` : `Node ${process.version}, NOT the image's ${image} (put \`bash .ci/node\` first on PATH)`;
  return `gateway on ${node} with ${IMAGE_NODE_FLAGS.join(" ")}`;
}

export interface BundledGatewayOptions {
  /** Path of the catalog file. */
  catalog: string;
  /** The one API key it accepts. */
  key: string;
  /** Command prefix (core pinning). */
  prefix?: readonly string[];
  /** Node flags after the image's own (e.g. --cpu-prof). */
  nodeFlags?: readonly string[];
  env?: Record<string, string>;
  /** A bundle built already (e.g. another revision's, for an A/B comparison) instead of building this tree's. */
  bundle?: string;
}

/**
 * The production gateway as the image runs it: the esbuild bundle, this process's node with the image's flags
 * (heap caps) and nothing else (no source maps), one JSON log line per request (to /dev/null), a file limit that
 * fits many streams.
 */
export async function startBundledGateway(o: BundledGatewayOptions): Promise<{ url: string; proc: ChildProcess; bundle: string }> {
  const bundle = o.bundle ?? join((await buildGateway(mkdtempSync(join(tmpdir(), "bench-bundle-")))).outDir, BUNDLE);
  const port = await freePort();
  const env = {
    ...process.env,
    NODE_ENV: "production",
    GATEWAY_CATALOG: o.catalog,
    GATEWAY_API_KEY: o.key,
    LOG_LEVEL: "info",
    GATEWAY_HOST: "127.0.0.1",
    PORT: String(port),
    GATEWAY_METRICS_PORT: String(await freePort()),
    ...o.env,
  };
  const argv = [...(o.prefix ?? []), process.execPath, ...IMAGE_NODE_FLAGS, ...(o.nodeFlags ?? []), bundle];
  const script = `ulimit -n 16384 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"`;
  const proc = spawn("sh", ["-c", script, "sh", ...argv], { cwd: ROOT, env, stdio: ["ignore", openSync("/dev/null", "w"), "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`gateway exited with ${proc.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error("gateway did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, proc, bundle };
}
