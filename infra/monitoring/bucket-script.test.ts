// The bucket Job's script, run for real: Debian's AWS CLI against a local S3-compatible server (s3rver).
// Needs the `awscli` Debian package (.ci/apt-packages). Locally it is skipped with a message when absent; in CI
// (CI set) a missing CLI fails the suite instead of skipping.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { exec, freePort } from "../platform/script-testing";
import { BUCKET_SCRIPTS, buildBucketJobSpec } from "./bucket-job";

const BUCKET_SCRIPT_PATH = BUCKET_SCRIPTS.s3.path;
// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

function findAws(): string | undefined {
  // Prefer the Debian package's binary over any other `aws` on PATH (e.g. a pip install).
  if (fs.existsSync("/usr/bin/aws")) return "/usr/bin/aws";
  const which = spawnSync("sh", ["-c", "command -v aws"], { encoding: "utf8" });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

const AWS = findAws();
if (!AWS && process.env.CI) {
  throw new Error("bucket-script.test: the AWS CLI (Debian package awscli) is required in CI; add it to .ci/apt-packages");
}
if (!AWS) console.warn("bucket-script.test: SKIPPED — the AWS CLI is not installed (apt-get install awscli)");
const describeIfAws = AWS ? describe : describe.skip;

// s3rver's fixed credentials; it checks request signatures, so wrong credentials get a real 403.
const GOOD = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  calls: string[];
  /** The CLI's arguments, one line per call. */
  argv: string[];
}

describeIfAws("create-bucket.sh against a real S3 server", () => {
  let server: InstanceType<typeof S3rver>;
  let endpoint: string;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "bucket-test-"));
    server = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory: path.join(dir, "data"),
      configureBuckets: [{ name: "already-there" }],
    });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    // A wrapper in front of the real CLI records every S3 call the script makes.
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "aws"), `#!/bin/sh\necho "$*" >> "$AWS_CALL_LOG"\nexec ${AWS} "$@"\n`, { mode: 0o755 });
  });

  afterAll(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function runScript(env: Record<string, string>): Promise<Run> {
    const log = path.join(dir, `calls-${Date.now()}-${Math.random()}.log`);
    fs.writeFileSync(log, "");
    const r = await exec("sh", [BUCKET_SCRIPT_PATH], {
        PATH: `${path.join(dir, "bin")}:${process.env.PATH ?? ""}`,
        HOME: dir,
        AWS_CALL_LOG: log,
        RETRY_DELAY_SECONDS: "0",
        ...env,
    });
    const argv = fs.readFileSync(log, "utf8").split("\n").filter(Boolean);
    const calls = argv.map((l) => (l.includes("head-bucket") ? "head-bucket" : l.includes("create-bucket") ? "create-bucket" : l));
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, calls, argv };
  }

  async function bucketExists(bucket: string): Promise<boolean> {
    const r = await exec(AWS as string, ["--endpoint-url", endpoint, "s3api", "head-bucket", "--bucket", bucket], {
      ...process.env,
      ...GOOD,
      AWS_DEFAULT_REGION: "us-east-1",
      HOME: dir,
    });
    return r.status === 0;
  }

  jest.setTimeout(120_000);

  test("existing bucket: head-bucket succeeds, nothing is created", async () => {
    const r = await runScript({ ...GOOD, S3_ENDPOINT: endpoint, S3_BUCKET: "already-there" });
    expect(r.status).toBe(0);
    expect(r.calls).toEqual(["head-bucket"]);
    expect(r.stdout).toContain("exists");
  });

  test("missing bucket: head fails, create-bucket creates it, on the first attempt", async () => {
    expect(await bucketExists("logstore-chunks")).toBe(false);
    const r = await runScript({ ...GOOD, S3_ENDPOINT: endpoint, S3_BUCKET: "logstore-chunks" });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    expect(r.calls).toEqual(["head-bucket", "create-bucket"]);
    expect(r.stdout).toContain("created (attempt 1/5)");
    expect(await bucketExists("logstore-chunks")).toBe(true);
    // And a second run is the no-op case.
    expect((await runScript({ ...GOOD, S3_ENDPOINT: endpoint, S3_BUCKET: "logstore-chunks" })).calls).toEqual(["head-bucket"]);
  });

  /** The environment the Job gives the script for this endpoint and region, pointed at the local server instead. */
  function jobEnv(s3Endpoint: string, region: string): Record<string, string> {
    const spec = buildBucketJobSpec({ image: "aws-cli", bucket: "unused", target: { store: "s3", s3Endpoint, region, credentials: { secretName: "s" } }, scriptConfigMapName: "c", fixedUserIds: true });
    const env = spec.template.spec.containers[0]?.env ?? [];
    const values = Object.fromEntries(env.flatMap((e) => ("value" in e && e.value !== undefined ? [[e.name, e.value]] : [])));
    return { ...values, S3_ENDPOINT: endpoint, RETRY_DELAY_SECONDS: "0", HOME: dir };
  }

  test("an AWS endpoint outside us-east-1: the bucket is created in the region (LocationConstraint), as AWS requires", async () => {
    const r = await runScript({ ...GOOD, ...jobEnv("https://s3.eu-central-1.amazonaws.com", "eu-central-1"), S3_BUCKET: "logs-eu" });
    expect({ status: r.status, calls: r.calls }).toEqual({ status: 0, calls: ["head-bucket", "create-bucket"] });
    expect(r.argv[1]).toMatch(/ create-bucket --bucket logs-eu --create-bucket-configuration LocationConstraint=eu-central-1$/);
    expect(await bucketExists("logs-eu")).toBe(true);
    // us-east-1 takes none: AWS refuses a LocationConstraint that names it.
    const east = await runScript({ ...GOOD, ...jobEnv("https://s3.amazonaws.com", "us-east-1"), S3_BUCKET: "logs-east" });
    expect(east.argv[1]).toMatch(/ create-bucket --bucket logs-east$/);
  });

  test("another store with a region: signed for it, but no LocationConstraint (Ceph, and MinIO with a region set, refuse one not theirs)", async () => {
    const env = jobEnv("http://objectstore.app-shaide.svc.cluster.local:9000", "eu-central-1");
    expect(env.AWS_DEFAULT_REGION).toBe("eu-central-1");
    const r = await runScript({ ...GOOD, ...env, S3_BUCKET: "logs-minio" });
    expect({ status: r.status, calls: r.calls }).toEqual({ status: 0, calls: ["head-bucket", "create-bucket"] });
    expect(r.argv[1]).toMatch(/ create-bucket --bucket logs-minio$/);
    expect(await bucketExists("logs-minio")).toBe(true);
  });

  test("object store unreachable: 5 attempts, then the script fails", async () => {
    const closedPort = await freePort();
    const r = await runScript({ ...GOOD, S3_ENDPOINT: `http://127.0.0.1:${closedPort}`, S3_BUCKET: "logstore-chunks" });
    expect(r.status).toBe(1);
    expect(r.calls).toEqual(Array.from({ length: 5 }, () => ["head-bucket", "create-bucket"]).flat());
    for (let i = 1; i <= 5; i++) expect(r.stderr).toContain(`attempt ${i}/5 failed`);
    expect(r.stderr).toContain("giving up");
  }, 120_000);

  test("wrong credentials: rejected by the server on every attempt, then the script fails", async () => {
    const r = await runScript({ AWS_ACCESS_KEY_ID: "NOT-A-USER", AWS_SECRET_ACCESS_KEY: "wrong", S3_ENDPOINT: endpoint, S3_BUCKET: "other-bucket", ATTEMPTS: "2" });
    expect(r.status).toBe(1);
    expect(r.calls).toEqual(["head-bucket", "create-bucket", "head-bucket", "create-bucket"]);
    expect(r.stderr).toMatch(/403|Forbidden|InvalidAccessKeyId|SignatureDoesNotMatch/);
    expect(await bucketExists("other-bucket")).toBe(false);
  }, 60_000);

  test("a missing S3_BUCKET is an immediate error, not a retry loop", async () => {
    const r = await runScript({ ...GOOD, S3_ENDPOINT: endpoint });
    expect(r.status).not.toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.stderr).toContain("S3_BUCKET is required");
  });
});
