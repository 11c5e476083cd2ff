import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3LedgerStore } from "../../src/ledger/store";

// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require("s3rver") as new (opts: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };

/** s3rver's fixed credentials; it checks signatures, so the clients sign as a real store expects. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface RunningS3 {
  endpoint: string;
  bucket: string;
  /** Where its objects live on disk (they survive a restart). */
  directory: string;
  /** A client of the bucket, as the gateway and the report use it. */
  store(): S3LedgerStore;
  /** The environment a gateway process needs to reach it (credentials through the SDK's default chain). */
  env: Record<string, string>;
  stop(): Promise<void>;
  /** Stops the server and starts it again on the same port and directory. */
  restart(downMs?: number): Promise<void>;
}

/** An S3-compatible server on loopback (s3rver, in this process) with one bucket, its data in a temporary directory. */
export async function startS3(bucket = "ledger-test"): Promise<RunningS3> {
  const directory = mkdtempSync(join(tmpdir(), "s3-"));
  let port = 0;
  const launch = async () => {
    const server = new S3rver({ address: "127.0.0.1", port, silent: true, directory, configureBuckets: [{ name: bucket }] });
    port = (await server.run()).port;
    return server;
  };
  let server: Awaited<ReturnType<typeof launch>> | undefined = await launch();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    store: () => new S3LedgerStore({ bucket, endpoint, region: "us-east-1", credentials: S3RVER_CREDENTIALS }),
    env: { AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey, AWS_EC2_METADATA_DISABLED: "true" },
    stop: async () => {
      await server?.close();
      server = undefined;
      rmSync(directory, { recursive: true, force: true });
    },
    restart: async (downMs = 0) => {
      await server?.close();
      server = undefined;
      await new Promise((r) => setTimeout(r, downMs));
      server = await launch();
    },
  };
}
