// The usage ledger's bucket Job script, run for real with Debian's AWS CLI: against moto's S3 server (which keeps
// lifecycle configurations) for the bucket, the rule and the rules of others; against s3rver (which answers
// NotImplemented to lifecycle calls) for a store without lifecycle rules. Skipped, naming what is missing, without the
// CLI or moto; with CI set a missing one fails the suite.
import { spawn, spawnSync, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { exec, freePort } from "../platform/script-testing";
import { TEST_LEDGER } from "./testing";
import { buildLedgerBucketJobSpec, LEDGER_RULE_ID, LEDGER_SCRIPT, lifecycleRule } from "./usage-ledger";
import type { UsageLedgerSetting } from "./usage-ledger-config";

// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

const AWS = fs.existsSync("/usr/bin/aws") ? "/usr/bin/aws" : undefined;
/** A Python whose moto has its server (Flask); Debian's first. */
const PYTHON = ["/usr/bin/python3", "python3"].find((p) => spawnSync(p, ["-c", "import moto.server"], { stdio: "ignore" }).status === 0);
const missing = [!AWS && "the AWS CLI (Debian package awscli)", !PYTHON && "moto's S3 server (python3 -c 'import moto.server')"].filter(Boolean);
if (missing.length > 0 && process.env.CI) throw new Error(`usage-ledger-script.test: ${missing.join(" and ")} required in CI`);
if (missing.length > 0) console.warn(`usage-ledger-script.test: SKIPPED — missing ${missing.join(" and ")}`);
const describeIfTools = missing.length === 0 ? describe : describe.skip;

const KEYS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

const ledger = (over: Partial<UsageLedgerSetting> = {}): UsageLedgerSetting => ({ ...TEST_LEDGER, ...over });

describeIfTools("usage-ledger-bucket.sh against real S3 servers", () => {
  let dir: string;
  let moto: ChildProcess;
  let motoEndpoint: string;
  let s3rver: InstanceType<typeof S3rver>;
  let s3rverEndpoint: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ledger-bucket-"));
    const port = await freePort();
    moto = spawn(PYTHON as string, ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
    motoEndpoint = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (await fetch(`${motoEndpoint}/moto-api/`).then((r) => r.ok, () => false)) break;
      if (i > 100) throw new Error("moto's server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    s3rver = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: path.join(dir, "s3rver") });
    s3rverEndpoint = `http://127.0.0.1:${(await s3rver.run()).port}`;
    // A wrapper in front of the real CLI records every call the script makes.
    fs.mkdirSync(path.join(dir, "bin"));
    fs.writeFileSync(path.join(dir, "bin", "aws"), `#!/bin/sh\necho "$*" >> "$AWS_CALL_LOG"\nexec ${AWS} "$@"\n`, { mode: 0o755 });
  }, 60_000);

  afterAll(async () => {
    moto?.kill();
    await s3rver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  jest.setTimeout(120_000);

  /** The environment the Job gives the script, pointed at a local server. */
  function jobEnv(setting: UsageLedgerSetting, endpoint: string): Record<string, string> {
    const env = buildLedgerBucketJobSpec({ ledger: setting, fixedUserIds: true }).template.spec.containers[0]?.env ?? [];
    return { ...Object.fromEntries(env.flatMap((e) => ("value" in e ? [[e.name, e.value]] : []))), S3_ENDPOINT: endpoint, RETRY_DELAY_SECONDS: "0", HOME: dir };
  }

  async function runScript(env: Record<string, string>) {
    const log = path.join(dir, `calls-${Date.now()}-${Math.random()}.log`);
    fs.writeFileSync(log, "");
    const r = await exec("sh", [LEDGER_SCRIPT.path], { PATH: `${path.join(dir, "bin")}:${process.env.PATH ?? ""}`, AWS_CALL_LOG: log, ...KEYS, ...env });
    // One line per call (a JSON argument may add lines of its own).
    const calls = fs.readFileSync(log, "utf8").split("\n").flatMap((l) => /^--endpoint-url \S+ .*\bs3api (\S+)/.exec(l)?.[1] ?? []);
    return { ...r, calls };
  }

  async function aws(endpoint: string, ...args: string[]) {
    const r = await exec(AWS as string, ["--endpoint-url", endpoint, "s3api", ...args], { ...process.env, ...KEYS, AWS_DEFAULT_REGION: "us-east-1", HOME: dir, AWS_PAGER: "" });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trim() ? JSON.parse(r.stdout) : undefined;
  }
  const rulesOf = async (bucket: string) => ((await aws(motoEndpoint, "get-bucket-lifecycle-configuration", "--bucket", bucket)) as { Rules: unknown[] }).Rules;

  test("a missing bucket is created with the rule: the ledger's prefix expires after the retention", async () => {
    const r = await runScript(jobEnv(ledger(), motoEndpoint));
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    expect(r.calls).toEqual(["head-bucket", "create-bucket", "get-bucket-lifecycle-configuration", "put-bucket-lifecycle-configuration"]);
    await aws(motoEndpoint, "head-bucket", "--bucket", "ai-platform-usage");
    expect(await rulesOf("ai-platform-usage")).toEqual([{ ID: LEDGER_RULE_ID, Status: "Enabled", Filter: { Prefix: "ledger/" }, Expiration: { Days: 396 } }]);
  });

  test("an existing bucket's other rules are kept; a second run changes nothing; a new retention replaces only ours", async () => {
    const bucket = "shared-store";
    const foreign = { ID: "logs-expiry", Status: "Enabled", Filter: { Prefix: "logs/" }, Expiration: { Days: 30 } };
    await aws(motoEndpoint, "create-bucket", "--bucket", bucket);
    await aws(motoEndpoint, "put-bucket-lifecycle-configuration", "--bucket", bucket, "--lifecycle-configuration", JSON.stringify({ Rules: [foreign] }));

    const setting = ledger({ bucket, prefix: "usage/ledger/", retentionDays: 731 });
    const first = await runScript(jobEnv(setting, motoEndpoint));
    expect({ status: first.status, calls: first.calls }).toEqual({ status: 0, calls: ["head-bucket", "get-bucket-lifecycle-configuration", "put-bucket-lifecycle-configuration"] });
    const ours = lifecycleRule(setting);
    expect(await rulesOf(bucket)).toEqual(expect.arrayContaining([foreign, ours]));
    expect(await rulesOf(bucket)).toHaveLength(2);

    const again = await runScript(jobEnv(setting, motoEndpoint));
    expect(again.status).toBe(0);
    const afterSecond = await rulesOf(bucket);
    expect(afterSecond).toHaveLength(2);
    expect(afterSecond).toEqual(expect.arrayContaining([foreign, ours]));

    expect((await runScript(jobEnv({ ...setting, retentionDays: 90 }, motoEndpoint))).status).toBe(0);
    expect(await rulesOf(bucket)).toEqual(expect.arrayContaining([foreign, { ...ours, Expiration: { Days: 90 } }]));
    expect(await rulesOf(bucket)).toHaveLength(2);
  });

  test("an empty prefix: the rule covers the whole bucket", async () => {
    const r = await runScript(jobEnv(ledger({ bucket: "usage-only", prefix: "" }), motoEndpoint));
    expect(r.status).toBe(0);
    expect(await rulesOf("usage-only")).toEqual([{ ID: LEDGER_RULE_ID, Status: "Enabled", Filter: { Prefix: "" }, Expiration: { Days: 396 } }]);
  });

  test("a store without lifecycle rules (s3rver): the bucket is made, nothing is written over, the Job fails saying why", async () => {
    const r = await runScript({ ...jobEnv(ledger({ bucket: "no-lifecycle" }), s3rverEndpoint), ATTEMPTS: "2" });
    expect(r.status).toBe(1);
    expect(r.calls).toEqual(["head-bucket", "create-bucket", "get-bucket-lifecycle-configuration", "head-bucket", "get-bucket-lifecycle-configuration"]);
    expect(r.stderr).toContain("NotImplemented");
    expect(r.stderr).toContain("giving up on bucket no-lifecycle after 2 attempts");
    await aws(s3rverEndpoint, "head-bucket", "--bucket", "no-lifecycle");
  });

  test("a missing setting is an immediate error, not a retry loop", async () => {
    const { RETENTION_DAYS: _days, ...env } = jobEnv(ledger(), motoEndpoint);
    const r = await runScript(env);
    expect(r.status).not.toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.stderr).toContain("RETENTION_DAYS is required");
  });
});
