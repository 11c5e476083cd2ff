import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import OpenAI from "openai";

/** `npm start`, the embedded default, as a real process: what a new user runs first. */
const ROOT = join(__dirname, "..", "..", "..");
const TSX = join(ROOT, "node_modules", ".bin", "tsx");

function startLocal(env: Record<string, string>): { child: ChildProcessWithoutNullStreams; output: () => string; ready: Promise<string> } {
  const child = spawn(TSX, ["local/start.ts"], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: "warn" } });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Base URL: (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { child, output: () => out, ready };
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const [code] = (await exited) as [number | null];
  return code;
}

describe("npm start (embedded default)", () => {
  it("serves the local fleet with the key from GATEWAY_API_KEY and exits cleanly on SIGTERM", async () => {
    const key = "sk-quickstart-test-key-0123456789";
    const p = startLocal({ PORT: "0", GATEWAY_API_KEY: key });
    const baseURL = await p.ready;
    const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });
    const models = (await client.models.list()).data.map((m) => m.id);
    expect(models.length).toBeGreaterThanOrEqual(2);
    const r = await client.chat.completions.create({ model: models[0]!, messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    expect(r.choices[0]?.message.content).toBeTruthy();
    expect(p.output()).not.toContain(key);
    expect(await stop(p.child)).toBe(0);
  });

  it("serves sim-chat's example adapter by name, listed with its parent, streaming and not", async () => {
    const key = "sk-quickstart-test-key-0123456789";
    const p = startLocal({ PORT: "0", GATEWAY_API_KEY: key });
    try {
      const client = new OpenAI({ baseURL: await p.ready, apiKey: key, maxRetries: 0 });
      const card = (await client.models.list()).data.find((m) => m.id === "sim-chat-adapter");
      expect(card).toMatchObject({ id: "sim-chat-adapter", parent: "sim-chat" });
      // sim-chat wakes from zero on this first request (~5 s), then loads the adapter on the replica it lands on.
      const answer = await client.chat.completions.create({ model: "sim-chat-adapter", messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
      expect(answer.model).toBe("sim-chat-adapter");
      expect(answer.choices[0]?.message.content).toBeTruthy();
      const stream = await client.chat.completions.create({ model: "sim-chat-adapter", messages: [{ role: "user", content: "hello" }], max_tokens: 4, stream: true });
      let text = "";
      for await (const chunk of stream) {
        expect(chunk.model).toBe("sim-chat-adapter");
        text += chunk.choices[0]?.delta.content ?? "";
      }
      expect(text).toBeTruthy();
    } finally {
      expect(await stop(p.child)).toBe(0);
    }
    // A start under tsx, then sim-chat's 5 s wake from zero, on a loaded machine.
  }, 90_000);

  it("generates a key when none is given and prints it exactly once", async () => {
    const env: Record<string, string> = { PORT: "0" };
    const p = startLocal({ ...env, GATEWAY_API_KEY: "" });
    const baseURL = await p.ready;
    const keys = p.output().match(/sk-[A-Za-z0-9_-]{43}/g) ?? [];
    expect(keys).toHaveLength(1);
    const client = new OpenAI({ baseURL, apiKey: keys[0]!, maxRetries: 0 });
    expect((await client.models.list()).data.length).toBeGreaterThan(0);
    expect(await stop(p.child)).toBe(0);
  });
});
