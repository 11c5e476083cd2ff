// npm run usage over a real usage ledger: written by the gateway's own writer (UsageLedger) on a moved clock, several
// replicas per hour, into a real S3-compatible server (s3rver) and a directory; the command run as an operator runs
// it, its figures compared with sums of what the test recorded.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "../../../infra/platform/charts";
import { systemClock } from "../../src/context/clock";
import { COUNT_FIELDS, emptyCounts, addCounts, type LedgerCounts } from "../../src/ledger/format";
import { DirLedgerStore, S3LedgerStore, type LedgerStore } from "../../src/ledger/store";
import { UsageLedger } from "../../src/ledger/usage-ledger";
import { createLogger } from "../../src/observability/logger";
import { DEFAULT_RETENTION_DAYS, usageOptionsFromArgv } from "../../../scripts/lib/usage-options";
import { LEDGER_LIFECYCLE_RULE_ID } from "../../../scripts/lib/usage-retention";
import { DEFAULT_RETENTION_DAYS as STACK_RETENTION_DAYS } from "../../../infra/gateway/usage-ledger-config";
import { LEDGER_RULE_ID as STACK_RULE_ID } from "../../../infra/gateway/usage-ledger";

// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const BUCKET = "usage-ledger";
// s3rver's fixed credentials; it checks signatures.
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
/** Late enough that all of 2026 is within the default 396 days. */
const NOW = "2027-01-20T08:00:00Z";

interface Recorded extends LedgerCounts {
  hourMs: number;
  key: string;
  model: string;
}

/** A small deterministic generator, so every run writes the same ledger. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Month edges on both sides of the range and inside it; hours a replica restarted in.
const HOURS = ["2025-12-31T23", "2026-01-01T00", "2026-01-15T12", "2026-02-28T23", "2026-03-01T00", "2026-06-30T23", "2026-07-01T00", "2026-12-31T23", "2027-01-01T00"].map((h) => Date.parse(`${h}:00:00Z`));
const KEYS = ["team-a", "team-b", "team-c"];
const MODELS = ["chat", "embed", "chat-lora"];

/**
 * Writes the ledger as three gateway replicas would over the HOURS, each recording requests at a moved wall clock;
 * in the hours of the second half, replica gw-b restarts mid-hour (a new process, a new object beside its old one).
 * Returns what was recorded.
 */
async function writeLedger(store: LedgerStore, prefix: string): Promise<Recorded[]> {
  const next = random(30);
  const recorded: Recorded[] = [];
  let wall = 0;
  const log = createLogger("silent", { write: () => undefined });
  const start = (podName: string) => new UsageLedger(store, { prefix, podName, flushMs: 3_600_000, clock: systemClock, wallNow: () => wall, log });
  let replicas = ["gw-a", "gw-b", "gw-c"].map(start);
  const stopped: UsageLedger[] = [];
  for (const [i, hourMs] of HOURS.entries()) {
    for (let n = 0; n < 40; n++) {
      wall = hourMs + Math.floor(next() * 3_599_000);
      const counts = { requests: 1, prompt_tokens: Math.floor(next() * 900), completion_tokens: Math.floor(next() * 400), cached_tokens: 0 };
      counts.cached_tokens = Math.floor(next() * counts.prompt_tokens);
      const entry = { hourMs, key: KEYS[Math.floor(next() * KEYS.length)]!, model: MODELS[Math.floor(next() * MODELS.length)]!, ...counts };
      replicas[n % 3]!.record(entry.key, entry.model, counts);
      recorded.push(entry);
      if (i >= HOURS.length / 2 && n === 20) {
        stopped.push(replicas[1]!);
        replicas = [replicas[0]!, start("gw-b"), replicas[2]!];
      }
    }
  }
  for (const r of [...stopped, ...replicas]) await r.close(10_000);
  return recorded;
}

/** Sums of what was recorded in [from, to), by key, model and month, as the report's JSON rows. */
function expectedByKeyModelMonth(recorded: Recorded[], fromMs: number, toMs: number) {
  const groups = new Map<string, LedgerCounts>();
  for (const r of recorded.filter((x) => x.hourMs >= fromMs && x.hourMs < toMs)) {
    const id = JSON.stringify([r.key, r.model, new Date(r.hourMs).toISOString().slice(0, 7)]);
    if (!groups.has(id)) groups.set(id, emptyCounts());
    addCounts(groups.get(id)!, r);
  }
  return [...groups]
    .map(([id, c]) => {
      const [key, model, month] = JSON.parse(id) as [string, string, string];
      return { key, model, month, ...c, total_tokens: c.prompt_tokens + c.completion_tokens };
    })
    .sort((a, b) => (a.key !== b.key ? (a.key < b.key ? -1 : 1) : a.model !== b.model ? (a.model < b.model ? -1 : 1) : a.month < b.month ? -1 : 1));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of an operator's shell: no ledger or AWS settings but those given. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GATEWAY_LEDGER_") && !k.startsWith("AWS_") && k !== "USAGE_REPORT_NOW"));
  return { ...env, AWS_EC2_METADATA_DISABLED: "true", USAGE_REPORT_NOW: NOW, ...extra };
}

/** Async: s3rver runs in this process and must keep serving while the command runs. */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

const usage = (args: string[], env: Record<string, string>) => run(process.execPath, ["--import", "tsx", "scripts/usage-report.ts", ...args], cleanEnv(env));

const YEAR = ["--from", "2026-01-01", "--to", "2026-12-31"];
const YEAR_MS: [number, number] = [Date.parse("2026-01-01T00:00:00Z"), Date.parse("2027-01-01T00:00:00Z")];

describe("npm run usage: the ledger's usage for any period it keeps", () => {
  let dir: string;
  let server: InstanceType<typeof S3rver>;
  let endpoint: string;
  let s3Env: Record<string, string>;
  let dirEnv: Record<string, string>;
  let recorded: Recorded[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "usage-report-"));
    server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: path.join(dir, "s3"), configureBuckets: [{ name: BUCKET }] });
    endpoint = `http://127.0.0.1:${(await server.run()).port}`;
    const s3 = new S3LedgerStore({ bucket: BUCKET, endpoint, region: "us-east-1", credentials: CREDENTIALS });
    recorded = await writeLedger(s3, "ledger/");
    // The same records written again into a directory (new replica names, the same sums).
    expect(await writeLedger(new DirLedgerStore(path.join(dir, "local")), "ledger/")).toEqual(recorded);
    // An object whose second line is not a ledger line, under a prefix of its own.
    const good = JSON.stringify({ hour: "2026-05-05T05:00:00Z", key: "team-a", model: "chat", replica: "gw-x-1", requests: 1, prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0 });
    await s3.put("corrupt/v1/hour=2026-05-05T05/replica=gw-x-1.jsonl", `${good}\n${good.replace('"requests":1', '"requests":-1')}\n`);
    s3.close();
    s3Env = { GATEWAY_LEDGER_BUCKET: BUCKET, GATEWAY_LEDGER_S3_ENDPOINT: endpoint, AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey };
    dirEnv = { GATEWAY_LEDGER_DIR: path.join(dir, "local") };
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the ledger holds several replicas per hour, so the report must sum across them", async () => {
    const keys = (await new DirLedgerStore(path.join(dir, "local")).list("ledger/v1/hour=2026-12-31T23")).map((o) => o.key);
    expect(keys).toHaveLength(4);
    expect(keys.filter((k) => /replica=gw-b-/.test(k))).toHaveLength(2);
  });

  test("the acceptance command, npm run usage -- --from 2026-01-01 --to 2026-12-31 --by key,model,month, over the bucket", async () => {
    const npm = path.join(path.dirname(process.execPath), "npm");
    const r = await run(existsSync(npm) ? npm : "npm", ["run", "usage", "--", ...YEAR, "--by", "key,model,month"], cleanEnv(s3Env));
    expect(r.stderr.replace(/^npm warn.*\n/gim, "")).toBe("");
    expect(r.code).toBe(0);
    // npm prints its own header first; the table starts at its heading.
    const table = r.stdout.slice(r.stdout.indexOf("key ")).trimEnd().split("\n");
    expect(table[0]!.split(/\s+/)).toEqual(["key", "model", "month", "requests", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens"]);
    const expected = expectedByKeyModelMonth(recorded, ...YEAR_MS);
    const body = table.slice(1, -2).map((l) => l.split(/\s+/));
    expect(body).toEqual(expected.map((e) => [e.key, e.model, e.month, ...[...COUNT_FIELDS, "total_tokens" as const].map((f) => String(e[f]))]));
    // Every key, model and month of 2026 recorded, none of 2025 or 2027.
    expect(new Set(body.map((l) => l[2]))).toEqual(new Set(["2026-01", "2026-02", "2026-03", "2026-06", "2026-07", "2026-12"]));
    const sum = (f: keyof LedgerCounts) => recorded.filter((x) => x.hourMs >= YEAR_MS[0] && x.hourMs < YEAR_MS[1]).reduce((n, x) => n + x[f], 0);
    expect(table.at(-1)!.split(/\s+/)).toEqual(["total", ...COUNT_FIELDS.map((f) => String(sum(f))), String(sum("prompt_tokens") + sum("completion_tokens"))]);
  }, 60_000);

  test.each([
    ["the bucket", () => s3Env],
    ["a directory", () => dirEnv],
  ])("JSON over %s: sums per key, model and month equal what was recorded", async (_, env) => {
    const r = await usage([...YEAR, "--by", "key,model,month", "--format", "json"], env());
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual(expectedByKeyModelMonth(recorded, ...YEAR_MS));
  }, 60_000);

  test("instants take whole hours, filters keep one key and model, CSV has a heading and a row per group", async () => {
    // From inside 2026-02-28T23 to inside 2026-03-01T00: both hours, nothing else.
    const r = await usage(["--from", "2026-02-28T23:30Z", "--to", "2026-03-01T00:10Z", "--by", "day,key", "--model", "chat", "--key", "team-b", "--format", "csv"], dirEnv);
    expect(r.stderr).toBe("");
    const rows = recorded.filter((x) => x.model === "chat" && x.key === "team-b" && (x.hourMs === HOURS[3] || x.hourMs === HOURS[4]));
    const line = (day: string) => {
      const c = rows.filter((x) => new Date(x.hourMs).toISOString().startsWith(day)).reduce((n, x) => addCounts(n, x), emptyCounts());
      return [day, "team-b", ...COUNT_FIELDS.map((f) => c[f]), c.prompt_tokens + c.completion_tokens].join(",");
    };
    const days = [...new Set(rows.map((x) => new Date(x.hourMs).toISOString().slice(0, 10)))].sort();
    expect(days).toEqual(["2026-02-28", "2026-03-01"]);
    expect(r.stdout).toBe(["day,key,requests,prompt_tokens,completion_tokens,cached_tokens,total_tokens", ...days.map(line), ""].join("\n"));
  }, 60_000);

  test("a corrupt object fails the report with the object's key and the line's number", async () => {
    const r = await usage(["--from", "2026-05-01", "--to", "2026-05-31", "--prefix", "corrupt/"], s3Env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^corrupt\/v1\/hour=2026-05-05T05\/replica=gw-x-1\.jsonl:2: requests: /);
  }, 60_000);

  test("a start before what the ledger keeps is refused, saying what is kept and what to ask for; that is accepted", async () => {
    // 396 days before 2027-03-01: 2026-01-29.
    const env = { ...dirEnv, USAGE_REPORT_NOW: "2027-03-01T00:00:00Z" };
    const refused = await usage([...YEAR], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trim()).toBe(
      "--from 2026-01-01T00:00:00.000Z: the ledger keeps 396 days (the default; --retention-days sets it); older hours have expired, so the report would undercount. " +
        "Ask for --from 2026-01-29 or later; usage before that is only in reports saved while it was kept.",
    );
    expect((await usage(["--from", "2026-01-29", "--to", "2026-12-31"], env)).code).toBe(0);
    expect((await usage(["--from", "2026-12-01", "--retention-days", "10"], env)).stderr).toMatch(/the ledger keeps 10 days \(--retention-days\).*--from 2027-02-19 or later/);
  }, 60_000);

  describe("the retention the bucket's lifecycle rule sets", () => {
    let proxy: Server;
    let proxyUrl: string;
    let mode: "rule" | "denied" = "rule";
    let asked = 0;
    const RULES =
      `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
      `<Rule><ID>tmp-files</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>` +
      `<Rule><ID>ai-platform-usage-ledger</ID><Filter><Prefix>ledger/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>` +
      `</LifecycleConfiguration>`;

    // s3rver does not implement lifecycle configurations: a proxy answers GetBucketLifecycleConfiguration as S3
    // does and passes every other request to s3rver unchanged (so signatures still verify).
    beforeAll(async () => {
      proxy = createServer((req, res) => {
        if (/[?&]lifecycle(=|&|$)/.test(req.url ?? "")) {
          asked += 1;
          if (mode === "denied") res.writeHead(403, { "content-type": "application/xml" }).end("<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
          else res.writeHead(200, { "content-type": "application/xml" }).end(RULES);
          return;
        }
        const target = new URL(endpoint);
        const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(up);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(() => proxy?.close());

    test("its expiration bounds the report; a range inside it is read through the same endpoint", async () => {
      mode = "rule";
      const env = { ...s3Env, GATEWAY_LEDGER_S3_ENDPOINT: proxyUrl, USAGE_REPORT_NOW: "2027-01-20T12:00:00Z" };
      const refused = await usage(["--from", "2026-12-01"], env);
      expect(refused.stderr).toMatch(/the ledger keeps 30 days \(the bucket's lifecycle rule ai-platform-usage-ledger\).*Ask for --from 2026-12-22 or later/);
      expect(refused.code).toBe(1);
      const kept = await usage(["--from", "2026-12-22", "--format", "json", "--by", "month"], env);
      expect(kept.stderr).toBe("");
      const dec = expectedByKeyModelMonth(recorded, Date.parse("2026-12-22T00:00:00Z"), Date.parse("2027-01-20T12:00:00Z"));
      const total = (f: keyof LedgerCounts) => dec.filter((e) => e.month === "2026-12").reduce((n, e) => n + e[f], 0);
      expect(JSON.parse(kept.stdout)[0]).toEqual({ month: "2026-12", ...Object.fromEntries(COUNT_FIELDS.map((f) => [f, total(f)])), total_tokens: total("prompt_tokens") + total("completion_tokens") });
      expect(asked).toBe(2);
    }, 60_000);

    test("credentials not allowed to read it: the default, 396 days", async () => {
      mode = "denied";
      const r = await usage(["--from", "2025-12-01"], { ...s3Env, GATEWAY_LEDGER_S3_ENDPOINT: proxyUrl });
      expect(r.stderr).toMatch(/the ledger keeps 396 days \(the default; --retention-days sets it\)/);
    }, 60_000);
  });

  test("--help prints every option and exits 0; an unknown option fails, naming it, with the options; a bad value names its option", async () => {
    const help = await usage(["--help"], {});
    expect(help.code).toBe(0);
    for (const option of ["--from", "--to", "--by", "--key", "--model", "--format", "--bucket", "--endpoint", "--region", "--prefix", "--dir", "--retention-days", "--help"]) expect(help.stdout).toContain(`  ${option} `);
    const wrong = await usage(["--range", "7d"], dirEnv);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^Unknown option '--range'[\s\S]*--from DATE/);
    const bad = await usage(["--by", "key,week"], dirEnv);
    expect(bad.stderr.trim()).toBe('--by: "week" is none of key, model, month, day, hour');
  }, 60_000);
});

describe("npm run usage's options", () => {
  test("the lifecycle rule it reads and the retention it assumes are the stack's", () => {
    expect([LEDGER_LIFECYCLE_RULE_ID, DEFAULT_RETENTION_DAYS]).toEqual([STACK_RULE_ID, STACK_RETENTION_DAYS]);
  });

  const now = new Date("2026-11-29T07:41:00Z");
  const env = { GATEWAY_LEDGER_BUCKET: "ledger-bucket" };
  const parse = (args: string[], e: NodeJS.ProcessEnv = env) => usageOptionsFromArgv(args, e, now);
  const at = (iso: string) => Date.parse(iso);

  test.each([
    ["defaults: this month to now, by key and model, from the environment's bucket", [], { from: at("2026-11-01T00:00:00Z"), to: now.getTime(), by: ["key", "model"], format: "table", bucket: "ledger-bucket", region: "us-east-1", prefix: "ledger/" }],
    ["a date --to covers that whole day", ["--from", "2026-01-01", "--to", "2026-12-31"], { from: at("2026-01-01T00:00:00Z"), to: at("2027-01-01T00:00:00Z") }],
    ["instants, UTC without a zone", ["--from", "2026-03-04T05", "--to", "2026-03-04T07:30"], { from: at("2026-03-04T05:00:00Z"), to: at("2026-03-04T07:30:00Z") }],
    ["an instant in another zone", ["--from", "2026-03-04T05:00+02:00"], { from: at("2026-03-04T03:00:00Z") }],
    ["a directory flag replaces the environment's bucket", ["--dir", "/var/ledger", "--prefix", "usage/"], { dir: "/var/ledger", bucket: undefined, prefix: "usage/" }],
  ])("%s", (_, args, expected) => {
    expect(parse(args)).toMatchObject(expected);
  });

  test.each([
    ["--from", ["--from", "2026-02-30"], /^--from: "2026-02-30" is not a date/],
    ["--from", ["--from", "last month"], /^--from: "last month" is not a date/],
    ["--to", ["--from", "2026-03-02", "--to", "2026-03-01"], /^--to: must be after --from$/],
    ["--by", ["--by", "key,key"], /^--by: a field named twice$/],
    ["--format", ["--format", "xml"], /^--format: /],
    ["--retention-days", ["--retention-days", "0"], /^--retention-days: /],
    ["--endpoint", ["--endpoint", "not a url"], /^--endpoint: /],
    ["--bucket", ["--bucket", "Not_A_Bucket"], /^--bucket: an S3 bucket name$/],
    ["--bucket", [], /^--bucket: name the ledger/, {}],
    ["--dir", ["--bucket", "bucket", "--dir", "/d"], /^--dir: a bucket or a directory, not both$/],
  ])("%s: refused, naming it", (_, args, message, e = env) => {
    expect(() => parse(args, e)).toThrow(message);
  });
});
