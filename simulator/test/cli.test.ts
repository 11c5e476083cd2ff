import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseCliArgs, parseDurationMs } from "../src/cli-args";
import { SimulatorConfigSchema } from "../src/config";

const REPO_ROOT = path.resolve(__dirname, "../..");

interface Listening {
  event: string;
  url: string;
  port: number;
  pid: number;
}

/** Starts the CLI as its own process (node + tsx loader, so the pid is the server itself). */
async function startCli(args: string[]): Promise<{ child: ChildProcess; listening: Listening }> {
  const child = spawn(process.execPath, ["--import", "tsx", "simulator/src/cli.ts", ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code]) => {
      throw new Error(`cli exited early with ${String(code)}`);
    }),
  ])) as [string];
  return { child, listening: JSON.parse(line) as Listening };
}

describe("cli process", () => {
  test("prints its listening line, serves, and exits 0 on SIGTERM", async () => {
    const { child, listening } = await startCli(["--model", "cli-model", "--served-model-name", "cli-alias", "--port", "0", "--ttft-ms", "0", "--itl-ms", "0", "--pod-name", "cli-pod"]);
    try {
      expect(listening.event).toBe("listening");
      expect(listening.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(listening.pid).toBe(child.pid);
      const models = (await (await fetch(`${listening.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).toEqual(["cli-model", "cli-alias"]);
      const res = await fetch(`${listening.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "cli-alias", messages: [{ role: "user", content: "hi" }], max_tokens: 3 }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-inference-pod")).toBe("cli-pod");
      expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(3);
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
      await expect(fetch(`${listening.url}/health`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  test("SIGKILL takes it down for real: connections are refused", async () => {
    const { child, listening } = await startCli(["--model", "doomed"]);
    expect((await fetch(`${listening.url}/health`)).status).toBe(200);
    const exited = once(child, "exit");
    process.kill(listening.pid, "SIGKILL");
    const [, signal] = await exited;
    expect(signal).toBe("SIGKILL");
    await expect(fetch(`${listening.url}/health`)).rejects.toThrow();
  });

  test("bad flags exit with status 2 and a usage message", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "simulator/src/cli.ts", "--max-num-seqs", "lots"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toMatch(/--max-num-seqs: expected a number/);
    expect(stderr).toMatch(/Usage:/);
  });
});

describe("cli flag parsing", () => {
  test("flags map onto the config schema, llm-d-style aliases included", () => {
    const { config } = parseCliArgs(
      [
        "--model", "a,b",
        "--kind", "embed",
        "--port", "8001",
        "--max-num-seqs", "8",
        "--max-waiting-queue-length", "3",
        "--max-model-len", "2048",
        "--time-to-first-token", "20ms",
        "--inter-token-latency", "0.5s",
        "--prefill-time-per-token", "250us",
        "--time-factor-under-load", "2",
        "--startup-duration", "1s",
        "--failure-injection-rate", "25",
        "--failure-status", "503",
        "--drop-stream-after-tokens", "4",
        "--no-prefix-cache",
        "--block-size", "32",
        "--enable-auto-tool-choice",
      ],
      {},
    );
    const parsed = SimulatorConfigSchema.parse(config);
    expect(parsed).toMatchObject({
      models: ["a", "b"],
      kind: "embed",
      port: 8001,
      maxNumSeqs: 8,
      maxWaitingQueueLength: 3,
      maxModelLen: 2048,
      latency: { timeToFirstTokenMs: 20, interTokenLatencyMs: 500, prefillTimePerTokenMs: 0.25, timeFactorUnderLoad: 2 },
      startupDelayMs: 1000,
      failureRate: 0.25,
      failureStatus: 503,
      dropStreamAfterTokens: 4,
      prefixCache: { enabled: false, blockSize: 32, capacityBlocks: 1024 },
      toolCalling: true,
    });
  });

  test("env supplies model, pod name and port when flags do not", () => {
    const { config } = parseCliArgs([], { SIM_MODEL: "env-model", POD_NAME: "pod-x", PORT: "9000" });
    expect(SimulatorConfigSchema.parse(config)).toMatchObject({ models: ["env-model"], podName: "pod-x", port: 9000 });
    const flagsWin = parseCliArgs(["--model", "flag-model", "--port", "1"], { SIM_MODEL: "env-model", PORT: "9000" });
    expect(flagsWin.config).toMatchObject({ models: ["flag-model"], port: 1 });
  });

  test("durations", () => {
    expect(parseDurationMs("15", "x")).toBe(15);
    expect(parseDurationMs("1.5s", "x")).toBe(1500);
    expect(parseDurationMs("250us", "x")).toBeCloseTo(0.25);
    expect(() => parseDurationMs("soon", "x")).toThrow(/--x/);
    expect(() => parseCliArgs(["--unknown-flag"], {})).toThrow();
  });
});
