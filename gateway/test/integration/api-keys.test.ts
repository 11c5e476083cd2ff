import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { generateApiKey, hashApiKey, type ApiKeyEntry } from "../../src/auth/api-keys";
import { startHarness, waitFor, chatBody, type Harness } from "../support/harness";

/** Key lifecycle against a keys file the gateway re-reads, as it does with a mounted Secret. */
describe("API key lifecycle", () => {
  let h: Harness;
  const dir = mkdtempSync(join(tmpdir(), "keys-"));
  const file = join(dir, "keys.yaml");
  const teamA = generateApiKey();
  const teamB = generateApiKey();
  const expired = generateApiKey();
  const write = (entries: ApiKeyEntry[]) => writeFileSync(file, stringify({ keys: entries }));
  const entries = (aKey = teamA): ApiKeyEntry[] => [
    { name: "team-a", sha256: hashApiKey(aKey) },
    { name: "team-b", sha256: hashApiKey(teamB), models: ["open-model"] },
    { name: "old", sha256: hashApiKey(expired), expiresAt: "2021-06-01T00:00:00Z" },
  ];
  const call = (key: string, model = "open-model") =>
    h.fetch("/v1/chat/completions", { json: chatBody(model, { max_tokens: 2 }), headers: { authorization: `Bearer ${key}` } });
  const reloads = () => h.logs.filter((l) => l.msg === "API keys reloaded").length;

  beforeAll(async () => {
    write(entries());
    h = await startHarness([{ id: "open-model" }, { id: "secret-model" }], { settings: { keysFile: file, keysReloadIntervalMs: 50 } });
  });
  afterAll(() => h.close());

  it("accepts a valid key and logs its name only", async () => {
    expect((await call(teamA)).status).toBe(200);
    const line = h.logs.find((l) => l.apiKeyName === "team-a");
    expect(line).toBeDefined();
    expect(h.rawLogs.join("\n")).not.toContain(teamA);
  });

  it("hides models a key may not use: 404 model_not_found, and absent from /v1/models", async () => {
    const res = await call(teamB, "secret-model");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    const list = (await (await h.fetch("/v1/models", { headers: { authorization: `Bearer ${teamB}` } })).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).toEqual(["open-model"]);
    expect((await h.fetch("/v1/models/secret-model", { headers: { authorization: `Bearer ${teamB}` } })).status).toBe(404);
    expect((await call(teamB, "open-model")).status).toBe(200);
  });

  it("refuses an expired key with 401", async () => {
    const res = await call(expired);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
  });

  it("rotates a key without a restart: the old key stops working, the new one works", async () => {
    const rotated = generateApiKey();
    const before = reloads();
    write(entries(rotated));
    await waitFor(() => reloads() > before, 5000, "keys reload");
    expect((await call(teamA)).status).toBe(401);
    expect((await call(rotated)).status).toBe(200);
  });

  it("revokes a key removed from the file", async () => {
    const before = reloads();
    write(entries().filter((e) => e.name !== "team-b"));
    await waitFor(() => reloads() > before, 5000, "keys reload");
    expect((await call(teamB)).status).toBe(401);
  });

  it("keeps the last good keys when the file turns invalid", async () => {
    writeFileSync(file, "keys: [{ name: 'BAD NAME', sha256: 'nothex' }]");
    await waitFor(() => h.logs.some((l) => String(l.msg).includes("keeping the previous keys")), 5000, "error logged");
    expect((await call(teamA)).status).toBe(200);
    expect(h.rawLogs.join("\n")).not.toMatch(/sk-[A-Za-z0-9_-]{43}/);
  });
});

/** The documented promise with the production reload interval: a key removed from the file is refused within it. */
describe("revocation with the default reload interval", () => {
  it("refuses a removed key at most one reload interval (5 s) after the file changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keys-"));
    const file = join(dir, "keys.yaml");
    const keep = generateApiKey();
    const revoke = generateApiKey();
    writeFileSync(file, stringify({ keys: [{ name: "keep", sha256: hashApiKey(keep) }, { name: "revoke", sha256: hashApiKey(revoke) }] }));
    const h = await startHarness([{ id: "m" }], { settings: { keysFile: file } });
    try {
      const status = async (key: string) => (await h.fetch("/v1/models", { headers: { authorization: `Bearer ${key}` } })).status;
      expect(await status(revoke)).toBe(200);
      writeFileSync(file, stringify({ keys: [{ name: "keep", sha256: hashApiKey(keep) }] }));
      const changed = Date.now();
      while ((await status(revoke)) === 200) {
        expect(Date.now() - changed).toBeLessThan(5000 + 1500); // the interval, and a margin for a loaded machine
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await status(revoke)).toBe(401);
      expect(await status(keep)).toBe(200);
    } finally {
      await h.close();
    }
  });
});
