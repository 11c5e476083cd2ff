import { createServer } from "node:net";
import { startGatewayProcess, type GatewayProcess } from "../../../scripts/lib/gateway-process";
import { generateApiKey } from "../../src/auth/api-keys";
import { addCounts, emptyCounts, type LedgerCounts } from "../../src/ledger/format";
import { readLines } from "../../src/ledger/read";
import { startS3, type RunningS3 } from "../support/s3-server";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";

/**
 * The usage ledger with real parts: three production gateway processes on one Redis, writing to an S3-compatible
 * server (s3rver), under mixed traffic from four clients: answers, streams, streams the client cuts, embeddings,
 * requests to a model whose server is down, invalid requests, and requests held in a busy model's queue. Meanwhile
 * one replica is killed with SIGKILL and started again, Redis restarts and the object store is away for a second.
 * Then the ledger holds, per key and model:
 * - for every replica that stopped normally, exactly what its log lines say, and they say what the clients got
 *   (usage fields; a cut stream, what the relay counted, which bounds what the client received);
 * - for the killed one, everything it counted up to its last write, at most one flush interval before the kill.
 */
const FLUSH_MS = 500;
/** A write begun before the kill may not have landed: one put's time on this machine, generously. */
const WRITE_MARGIN_MS = 400;
const KEYS = { alpha: generateApiKey(), beta: generateApiKey() };

type Kind = "plain" | "stream" | "cut" | "embed" | "down" | "invalid";
interface Sent {
  id: string;
  gw: GatewayProcess;
  key: keyof typeof KEYS;
  model: string;
  kind: Kind;
  status: number;
  /** The usage the client was told (plain, stream, embed), or for a cut stream the content chunks it read. */
  usage?: LedgerCounts;
  chunksRead?: number;
  maxTokens: number;
  endedAt: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port nothing listens on: the "down" model's server. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

function counts(u: { prompt_tokens?: number; completion_tokens?: number } | undefined): LedgerCounts {
  return { requests: 1, prompt_tokens: u?.prompt_tokens ?? 0, completion_tokens: u?.completion_tokens ?? 0, cached_tokens: 0 };
}

async function send(gw: GatewayProcess, key: keyof typeof KEYS, kind: Kind, n: number): Promise<Sent> {
  const id = `ledger-${kind}-${n}`;
  const maxTokens = kind === "cut" ? 400 : 5 + (n % 25);
  const model = kind === "embed" ? "embed" : kind === "down" ? "down" : "chat";
  const body =
    kind === "embed" || kind === "down"
      ? { model, input: `text number ${n} to embed` }
      : kind === "invalid"
        ? { model, messages: "not a list" }
        : {
            model,
            messages: [{ role: "user", content: `Question ${n}: what is the tide?` }],
            max_tokens: maxTokens,
            ignore_eos: true,
            ...(kind === "stream" || kind === "cut" ? { stream: true, stream_options: { include_usage: true } } : {}),
          };
  const path = kind === "embed" || kind === "down" ? "/v1/embeddings" : "/v1/chat/completions";
  const abort = new AbortController();
  const sent: Sent = { id, gw, key, model, kind, status: 0, maxTokens, endedAt: 0 };
  try {
    const res = await fetch(`${gw.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS[key]}`, "content-type": "application/json", "x-request-id": id },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    sent.status = res.status;
    if (kind === "stream" || kind === "cut") {
      const reader = res.body!.getReader();
      let text = "";
      let chunks = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString("utf8");
        chunks = (text.match(/"delta":\{"content"/g) ?? []).length;
        if (kind === "cut" && chunks >= 5) {
          abort.abort();
          break;
        }
      }
      sent.chunksRead = chunks;
      if (kind === "stream") {
        const events = text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)) as { usage?: { prompt_tokens: number; completion_tokens: number } });
        const last = events.filter((e) => e.usage).pop();
        if (last) sent.usage = counts(last.usage);
      }
    } else {
      const json = (await res.json()) as { usage?: { prompt_tokens: number; completion_tokens?: number } };
      if (res.status === 200) sent.usage = counts(json.usage);
    }
  } catch {
    sent.status = sent.status || -1; // the connection broke (the replica was killed)
  }
  sent.endedAt = Date.now();
  return sent;
}

describeWithRedis("the usage ledger: three replicas, a SIGKILL, a Redis restart and an object store outage", () => {
  let redis: RunningRedis;
  let s3: RunningS3;
  const gws: GatewayProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    s3 = await startS3();
    Object.assign(process.env, s3.env); // the processes inherit the object store's credentials
  }, 30_000);

  afterAll(async () => {
    await Promise.all(gws.map((g) => g.stop()));
    await redis?.stop();
    await s3?.stop();
  });

  it("holds per key and model what the clients got, losing at most a flush interval of the killed replica", async () => {
    const down = await closedPort();
    const start = (name: string) =>
      startGatewayProcess({
        keys: KEYS,
        // A busy model: four at once per replica, the rest held in its queue.
        chat: { maxConcurrency: 4, interTokenLatencyMs: 4 },
        extraModels: [{ id: "down", url: `http://127.0.0.1:${down}`, category: "embedder" }],
        settings: { redisUrl: redis.url, redisTimeoutMs: 2000, ledgerBucket: s3.bucket, ledgerEndpoint: s3.endpoint, ledgerFlushMs: FLUSH_MS, replicaName: name },
      });
    for (const name of ["gw-0", "gw-1", "gw-2"]) gws.push(await start(name));
    const began = Date.now();

    const sent: Sent[] = [];
    const live = new Set(gws);
    let stop = false;
    let n = 0;
    const kinds: Kind[] = ["plain", "plain", "stream", "stream", "cut", "embed", "down", "invalid"];
    const client = async (c: number) => {
      while (!stop) {
        const i = n++;
        const targets = [...live];
        sent.push(await send(targets[(i + c) % targets.length]!, i % 3 === 0 ? "beta" : "alpha", kinds[(i * 7 + c) % kinds.length]!, i));
      }
    };
    const clients = [0, 1, 2, 3].map(client);

    await sleep(2000);
    // SIGKILL one replica; its pod starts it again half a second later (same name: a new part is drawn).
    const killed = gws[1]!;
    live.delete(killed);
    killed.proc.kill("SIGKILL");
    const killedAt = Date.now();
    await sleep(500);
    const restarted = await start("gw-1");
    gws.push(restarted);
    live.add(restarted);
    await sleep(1000);
    await redis.restart();
    await sleep(1000);
    await s3.restart(1000);
    await sleep(1500);
    stop = true;
    await Promise.all(clients);
    // A graceful stop writes the last counts (the store is back).
    for (const g of [gws[0]!, gws[2]!, restarted]) expect(await g.stop()).toBe(0);

    const lines = await readLines(s3.store(), "ledger/", began - 3_600_000, Date.now() + 3_600_000);
    const replicaOf = (g: GatewayProcess) => String(g.logs().find((l) => l.msg === "usage ledger on")?.replica);
    const byReplica = (replica: string) => {
      const sums = new Map<string, LedgerCounts>();
      for (const l of lines.filter((x) => x.replica === replica)) addCounts(sums.get(`${l.key} ${l.model}`) ?? sums.set(`${l.key} ${l.model}`, emptyCounts()).get(`${l.key} ${l.model}`)!, l);
      return sums;
    };

    // What each request's log line says, by request id.
    const logged = (g: GatewayProcess) => new Map(g.logs().filter((l) => l.msg === "request").map((l) => [String(l.requestId), l]));
    const kindsSeen = new Set<Kind>();
    for (const g of [gws[0]!, gws[2]!, restarted]) {
      const lineOf = logged(g);
      const expected = new Map<string, LedgerCounts>();
      for (const s of sent.filter((x) => x.gw === g)) {
        kindsSeen.add(s.kind);
        const line = lineOf.get(s.id);
        expect(line).toBeDefined();
        const fromLine = { requests: 1, prompt_tokens: Number(line!.promptTokens ?? 0), completion_tokens: Number(line!.completionTokens ?? 0), cached_tokens: 0 };
        // The log line says what the client got.
        if (s.usage) expect(fromLine).toEqual(s.usage);
        if (s.kind === "cut") {
          expect(s.status).toBe(200);
          expect(fromLine.completion_tokens).toBeGreaterThanOrEqual(s.chunksRead!);
          expect(fromLine.completion_tokens).toBeLessThanOrEqual(s.maxTokens);
        }
        // A model server answered: counted. Refused by the gateway, or no server reached: not counted.
        if (s.kind === "down" || s.kind === "invalid") {
          expect(s.status).toBeGreaterThanOrEqual(400);
          continue;
        }
        expect(s.status).toBe(200);
        const k = `${s.key} ${s.model}`;
        addCounts(expected.get(k) ?? expected.set(k, emptyCounts()).get(k)!, fromLine);
      }
      expect(Object.fromEntries(byReplica(replicaOf(g)))).toEqual(Object.fromEntries(expected));
    }
    expect([...kindsSeen].sort()).toEqual(["cut", "down", "embed", "invalid", "plain", "stream"]);

    // The killed replica: at least what its clients were told before its last write, at most what it served.
    const inLedger = byReplica(replicaOf(killed));
    const ofKilled = sent.filter((s) => s.gw === killed && s.kind !== "down" && s.kind !== "invalid");
    const keysModels = new Set(ofKilled.map((s) => `${s.key} ${s.model}`));
    let surelyWritten = 0;
    for (const k of keysModels) {
      const mine = ofKilled.filter((s) => `${s.key} ${s.model}` === k);
      const before = mine.filter((s) => s.status === 200 && s.usage && s.endedAt < killedAt - FLUSH_MS - WRITE_MARGIN_MS);
      surelyWritten += before.length;
      const floor = before.reduce((sum, s) => sum + s.usage!.prompt_tokens + s.usage!.completion_tokens, 0);
      const ceiling = mine.reduce((sum, s) => sum + (s.usage ? s.usage.prompt_tokens + s.usage.completion_tokens : 64 + s.maxTokens), 0);
      const got = inLedger.get(k);
      const tokens = got ? got.prompt_tokens + got.completion_tokens : 0;
      expect(tokens).toBeGreaterThanOrEqual(floor);
      expect(tokens).toBeLessThanOrEqual(ceiling);
      expect(got?.requests ?? 0).toBeGreaterThanOrEqual(before.length);
      expect(got?.requests ?? 0).toBeLessThanOrEqual(mine.length);
    }
    // The run reached what it claims: the killed replica had written, and the store's outage came and went.
    expect(surelyWritten).toBeGreaterThan(5);
    for (const g of [gws[0]!, gws[2]!, restarted]) {
      expect(g.logs().some((l) => l.msg === "usage ledger: write failed; counts are kept and written again at the next flush")).toBe(true);
      expect(g.logs().some((l) => l.msg === "usage ledger: writing again")).toBe(true);
    }
  }, 120_000);
});
