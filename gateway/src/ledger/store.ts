import { promises as fs } from "node:fs";
import * as path from "node:path";
import { GetBucketLifecycleConfigurationCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";

/** One stored object as a listing shows it: its key and a tag that changes whenever its content does. */
export interface LedgerObject {
  key: string;
  etag: string;
}

/** Where ledger objects live: an S3-compatible bucket, or a directory (one replica, `npm start`). */
export interface LedgerStore {
  /** Writes `body` at `key`, replacing what was there. */
  put(key: string, body: string): Promise<void>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<LedgerObject[]>;
  /** The object's text. */
  get(key: string): Promise<string>;
  /** Where it is, for messages (never credentials). */
  readonly describe: string;
}

export interface S3LedgerOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, Ceph, a test server); unset: AWS S3 in `region`. */
  endpoint?: string;
  region: string;
  /** Explicit credentials (tests, the usage report); unset: the SDK's default chain (environment, web identity). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Per-request timeout, ms. */
  timeoutMs?: number;
}

/** The ledger in an S3 bucket, through the AWS SDK (path-style with a custom endpoint, as MinIO and Ceph expect). */
export class S3LedgerStore implements LedgerStore {
  private readonly client: S3Client;
  readonly describe: string;

  constructor(private readonly options: S3LedgerOptions) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.endpoint !== undefined,
      credentials: options.credentials,
      maxAttempts: 3,
      requestHandler: { requestTimeout: options.timeoutMs ?? 10_000, connectionTimeout: 5_000 },
    });
    this.describe = `s3://${options.bucket}${options.endpoint ? ` at ${options.endpoint}` : ""}`;
  }

  async put(key: string, body: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: body, ContentType: "application/x-ndjson" }));
  }

  async list(prefix: string): Promise<LedgerObject[]> {
    const out: LedgerObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, etag: o.ETag ?? `${o.Size}:${o.LastModified?.getTime()}` });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async get(key: string): Promise<string> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
    return (await answer.Body?.transformToString("utf8")) ?? "";
  }

  /** The expiration, in days, of the bucket's enabled lifecycle rule `ruleId`; undefined when it has none. */
  async expirationDays(ruleId: string): Promise<number | undefined> {
    const answer = await this.client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: this.options.bucket }));
    const days = answer.Rules?.find((r) => r.ID === ruleId && r.Status === "Enabled")?.Expiration?.Days;
    return days !== undefined && days > 0 ? days : undefined;
  }

  close(): void {
    this.client.destroy();
  }
}

/** The ledger in a local directory: the same keys as paths; a write goes to a temporary file renamed over the object. */
export class DirLedgerStore implements LedgerStore {
  readonly describe: string;

  constructor(private readonly root: string) {
    this.describe = root;
  }

  async put(key: string, body: string): Promise<void> {
    const file = path.join(this.root, key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, body);
    await fs.rename(tmp, file);
  }

  async list(prefix: string): Promise<LedgerObject[]> {
    const out: LedgerObject[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
        throw err;
      }
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full);
        else if (!e.name.endsWith(".tmp")) {
          const key = path.relative(this.root, full).split(path.sep).join("/");
          if (key.startsWith(prefix)) {
            const stat = await fs.stat(full);
            out.push({ key, etag: `${stat.size}:${stat.mtimeMs}` });
          }
        }
      }
    };
    // Walk only the deepest directory the prefix names.
    await walk(path.join(this.root, prefix.slice(0, prefix.lastIndexOf("/") + 1)));
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async get(key: string): Promise<string> {
    return fs.readFile(path.join(this.root, key), "utf8");
  }
}
