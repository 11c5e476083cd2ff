// The image's payload: `npm run build:gateway` output is self-contained (no node_modules, no Pulumi, no dev
// dependencies) and, copied alone into a read-only directory, serves the API against a simulated model server.
import { type ChildProcess, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { startSimulator, type RunningSimulator } from "../../simulator/src";
import { generateApiKey, hashApiKey } from "../../gateway/src/auth/api-keys";
import { BUNDLE, buildGateway, type GatewayBuild, packageOf } from "../../scripts/build-gateway";

const ROOT = path.resolve(__dirname, "..", "..");
const rootPkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe("gateway build output", () => {
  let work: string;
  let built: GatewayBuild;
  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-build-"));
    built = await buildGateway(path.join(work, "app"));
  }, 60_000);
  afterAll(() => {
    fs.chmodSync(built.outDir, 0o755);
    fs.rmSync(work, { recursive: true, force: true });
  });

  test("one bundle, its source map and licence notices, and a package.json without dependencies", () => {
    expect(fs.readdirSync(built.outDir).sort()).toEqual(["bundled-packages.json", "package.json", BUNDLE, `${BUNDLE}.LEGAL.txt`, `${BUNDLE}.map`].sort());
    const pkg = JSON.parse(fs.readFileSync(path.join(built.outDir, "package.json"), "utf8")) as Record<string, unknown>;
    expect(pkg).toMatchObject({ name: "ai-platform-gateway", version: rootPkg.version, main: BUNDLE, type: "commonjs", engines: rootPkg.engines });
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.devDependencies).toBeUndefined();
  });

  test("the gateway's runtime dependencies are bundled; no Pulumi package and no dev dependency is", () => {
    for (const dep of ["express", "pino", "ioredis", "prom-client", "undici", "yaml", "zod"]) expect(built.packages).toContain(dep);
    expect(built.packages.filter((p) => p.startsWith("@pulumi/"))).toEqual([]);
    expect(built.packages.filter((p) => p in rootPkg.devDependencies)).toEqual([]);
    expect(fs.readFileSync(path.join(built.outDir, BUNDLE), "utf8")).not.toMatch(/require\(["']@pulumi\//);
  });

  test("the bundle is pure ASCII, so V8 holds its source one byte a character (non-ASCII text makes it two)", () => {
    const bytes = fs.readFileSync(path.join(built.outDir, BUNDLE));
    expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
  });

  test("package names come from the innermost node_modules", () => {
    expect(packageOf("node_modules/express/index.js")).toBe("express");
    expect(packageOf("node_modules/@ioredis/commands/built/index.js")).toBe("@ioredis/commands");
    expect(packageOf("node_modules/a/node_modules/b/x.js")).toBe("b");
    expect(packageOf("gateway/src/server.ts")).toBeUndefined();
  });

  describe("node serve.js, alone in a read-only directory", () => {
    let sim: RunningSimulator;
    let child: ChildProcess;
    let stdout = "";
    let stderr = "";
    let ports: { port: number; metricsPort: number };
    const key = generateApiKey();
    const exited = () => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));

    beforeAll(async () => {
      sim = await startSimulator({ models: ["sim-chat"], latency: { timeToFirstTokenMs: 1, interTokenLatencyMs: 0, prefillTimePerTokenMs: 0 } });
      const etc = fs.mkdtempSync(path.join(work, "etc-"));
      fs.writeFileSync(
        path.join(etc, "catalog.yaml"),
        `models:\n  - id: sim-chat\n    category: generative\n    upstream:\n      mode: endpoints\n      endpoints:\n        - url: ${sim.url}\n`,
      );
      fs.writeFileSync(path.join(etc, "keys.yaml"), `keys:\n  - name: team-a\n    sha256: ${hashApiKey(key)}\n`);
      // As in the pod: nothing in the app directory is writable, and nothing outside it can be required.
      fs.chmodSync(built.outDir, 0o555);
      child = spawn(process.execPath, ["--enable-source-maps", path.join(built.outDir, BUNDLE)], {
        cwd: built.outDir,
        env: {
          PATH: process.env.PATH,
          PORT: "0",
          GATEWAY_METRICS_PORT: "0",
          GATEWAY_HOST: "127.0.0.1",
          GATEWAY_CATALOG: path.join(etc, "catalog.yaml"),
          GATEWAY_KEYS_FILE: path.join(etc, "keys.yaml"),
          GATEWAY_DRAIN_DELAY_MS: "100",
          GATEWAY_SHUTDOWN_GRACE_MS: "2000",
          NODE_PATH: "",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
      ports = await new Promise((resolve, reject) => {
        const timer = setInterval(() => {
          const line = stdout.split("\n").find((l) => l.includes('"gateway listening"'));
          if (line) {
            clearInterval(timer);
            resolve(JSON.parse(line) as { port: number; metricsPort: number });
          } else if (child.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`serve.js exited ${child.exitCode}: ${stderr}${stdout}`));
          }
        }, 50);
      });
    }, 30_000);
    afterAll(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await sim.close();
    });

    const url = (p: string) => `http://127.0.0.1:${ports.port}${p}`;
    const auth = { authorization: `Bearer ${key}` };

    test("readiness, then /v1/models and a chat completion with the key; 401 without it", async () => {
      for (let i = 0; i < 100 && (await fetch(url("/readyz"))).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await fetch(url("/readyz"))).status).toBe(200);
      expect((await fetch(url("/healthz"))).status).toBe(200);
      expect((await fetch(url("/v1/models"))).status).toBe(401);
      const models = (await (await fetch(url("/v1/models"), { headers: auth })).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).toEqual(["sim-chat"]);
      const chat = await fetch(url("/v1/chat/completions"), {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ model: "sim-chat", messages: [{ role: "user", content: "Hello" }], max_tokens: 8 }),
      });
      expect(chat.status).toBe(200);
      const body = (await chat.json()) as { choices: { message: { content: string } }[]; usage: { completion_tokens: number } };
      expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    });

    test("metrics on their own port only; gateway_build_info carries the version written into the bundle", async () => {
      const metrics = await fetch(`http://127.0.0.1:${ports.metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toContain("gateway_requests_total");
      expect(text).toContain(`gateway_build_info{version="${rootPkg.version}"} 1`);
      // Written in at build time: the bundle reads no package.json for it.
      expect(fs.readFileSync(path.join(built.outDir, BUNDLE), "utf8")).not.toContain("__GATEWAY_VERSION__");
      expect((await fetch(url("/metrics"))).status).not.toBe(200);
    });

    test("SIGTERM: drains and exits 0; JSON log lines on stdout, never the key; the directory stayed untouched", async () => {
      child.kill("SIGTERM");
      expect(await exited()).toBe(0);
      const lines = stdout.trim().split("\n");
      for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
      expect(lines.some((l) => l.includes('"gateway stopped"'))).toBe(true);
      expect(stdout + stderr).not.toContain(key);
      expect(fs.readdirSync(built.outDir).sort()).toEqual(["bundled-packages.json", "package.json", BUNDLE, `${BUNDLE}.LEGAL.txt`, `${BUNDLE}.map`].sort());
    });
  });
});
