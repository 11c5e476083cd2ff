import { connect } from "node:net";
import { startGatewayProcess, type GatewayProcess } from "../../../scripts/lib/gateway-process";
import { SETTLE_GRACE_MS, tokensToReserve } from "../../src/limits/rate-limiter";
import { describeWithRedis, startRedis, type RunningRedis } from "../support/redis-server";
import { startSlowTcpProxy, type SlowTcpProxy } from "../support/slow-tcp-proxy";

/**
 * A client that leaves while the shared limiter (Redis) reserves its tokens. The production bundle runs in front
 * of the simulator with a real redis-server behind a proxy that delays every Redis reply by REDIS_DELAY_MS, so
 * each of the gateway's awaits on the store is long and a client's close surely lands inside the one we aim at.
 *
 * To land in the token reservation (after admission, after the body is read) the client uses Expect:
 * 100-continue: the gateway sends "100 Continue" only once the request is admitted (slot, rpm/tpm check, body
 * memory), so the client sends its body after that and closes right after its last byte; the gateway then reads
 * the body and awaits the reservation's reply for another REDIS_DELAY_MS, during which the close arrives. Clients
 * that send everything at once and close (the form) land in the admission's await instead: both must end
 * the same way. What must hold: the gateway lives on, nothing of an abandoned request reaches the model server,
 * and nothing it reserved stays charged once the settle grace has passed.
 */
const REDIS_DELAY_MS = 200;
/** The simulator's time per token: an orphaned request of ORPHAN_TOKENS runs about 1.2 s, long enough to overlap the next client's. */
const TOKEN_MS = 30;
const ORPHAN_TOKENS = 40;
const TPM = 10_000;
/** A day-long "minute": the bucket refills about 0.1 token a second, so a leaked reservation shows in the level, exactly. */
const WINDOW_MS = 86_400_000;
const CHAT_PATH = "/v1/chat/completions";
/** After the settle grace, time for the refund's own (delayed) Redis round trip on a loaded machine. */
const SLACK_MS = 2000;
const MESSAGES = [{ role: "user", content: "Say something about the sea." }];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends one complete request on a raw socket and closes the socket right after its last byte. With `handshake`,
 * it waits for "100 Continue" (the request admitted) before sending the body. Says what the client saw.
 */
function sendAndLeave(port: number, apiKey: string, body: Record<string, unknown>, handshake: boolean): Promise<string> {
  const payload = Buffer.from(JSON.stringify(body));
  const head =
    `POST ${CHAT_PATH} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${apiKey}\r\n` +
    `content-type: application/json\r\ncontent-length: ${payload.length}\r\n${handshake ? "expect: 100-continue\r\n" : ""}\r\n`;
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let seen = "";
    let settled = false;
    const done = (what: string) => {
      if (settled) return;
      settled = true;
      resolve(what);
    };
    // Written, then closed: destroy() once the kernel has the last byte.
    const leave = (what: string) => socket.write(payload, () => (socket.destroy(), done(what)));
    socket.on("error", (err) => done(`socket error: ${err.message}`));
    socket.on("close", () => done(`closed by the gateway: ${JSON.stringify(seen.slice(0, 80))}`));
    socket.once("connect", () => {
      if (!handshake) {
        socket.write(head);
        leave("left after its last byte");
        return;
      }
      socket.write(head);
      socket.on("data", (d: Buffer) => {
        seen += d.toString("latin1");
        if (settled) return;
        if (/^HTTP\/1\.1 100 /.test(seen) && seen.includes("\r\n\r\n")) leave("left after 100 Continue and its last byte");
        else if (seen.includes("\r\n\r\n")) {
          socket.destroy();
          done(`answered before its body: ${seen.slice(9, 12)}`);
        }
      });
    });
  });
}

/** The highest `running` the simulator reports while sampling. */
function samplePeak(gw: GatewayProcess): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, gw.sims[0]!.stats().running)), 5);
  return { stop: () => (clearInterval(timer), peak) };
}

/** A small, normal request, and the tokens it reserved by the gateway's own rule: a full bucket shows TPM minus that. */
async function probe(gw: GatewayProcess, key: string): Promise<{ status: number; tokensMissing: number; limitTokens: string | null } | string> {
  const json = { model: "chat", messages: MESSAGES, max_tokens: 1 };
  const text = JSON.stringify(json);
  try {
    const res = await fetch(`${gw.url}${CHAT_PATH}`, { method: "POST", headers: { authorization: `Bearer ${gw.keys[key]}`, "content-type": "application/json" }, body: text });
    await res.text();
    const remaining = Number(res.headers.get("x-ratelimit-remaining-tokens"));
    // Reported relative to a full bucket: 0 when nothing of the abandoned requests stays charged.
    const missing = TPM - tokensToReserve(json, Buffer.byteLength(text), CHAT_PATH, 4096) - remaining;
    return { status: res.status, tokensMissing: missing, limitTokens: res.headers.get("x-ratelimit-limit-tokens") };
  } catch (err) {
    return `probe failed: ${(err as Error).message}`;
  }
}

/** Null while the gateway runs; otherwise how it ended and the error it died of (the whole stderr is logged). */
function exitOf(gw: GatewayProcess, stderr: string[]): string | null {
  if (gw.proc.exitCode === null && gw.proc.signalCode === null) return null;
  const text = stderr.join("");
  console.log(`gateway stderr:\n${text}`);
  const error = /^\S*Error\b.*$/m.exec(text)?.[0] ?? text.trim().split("\n").slice(-3).join(" | ");
  return `exited (code ${gw.proc.exitCode}, signal ${gw.proc.signalCode}): ${error}`;
}

describeWithRedis("a client that leaves while its tokens are reserved in Redis", () => {
  let redis: RunningRedis;
  let proxy: SlowTcpProxy;
  /** One gateway per case: the first case's may die on today's code. */
  let gone: GatewayProcess;
  let refused: GatewayProcess;
  const stderr = new Map<GatewayProcess, string[]>();

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await startSlowTcpProxy({ port: redis.port }, REDIS_DELAY_MS);
    // A generous command timeout: the delay is the proxy's, not Redis being down (the store must stay shared).
    const settings = { redisUrl: proxy.url("redis"), redisTimeoutMs: 5000, rateLimitWindowMs: WINDOW_MS };
    const start = (name: string) =>
      startGatewayProcess({ keyNames: [name], keyLimits: { [name]: { tpm: TPM, maxConcurrent: 1 } }, settings, chat: { interTokenLatencyMs: TOKEN_MS } });
    [gone, refused] = await Promise.all([start("gone"), start("refused")]);
    for (const gw of [gone, refused]) {
      const lines: string[] = [];
      gw.proc.stderr!.on("data", (d: Buffer) => lines.push(d.toString("utf8")));
      stderr.set(gw, lines);
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all([gone, refused].filter(Boolean).map((g) => g.stop()));
    await proxy?.close();
    await redis?.stop();
  });

  it("cancels requests whose client left during admission or the token reservation: none reaches the model server, the gateway lives, nothing stays charged", async () => {
    const key = gone.keys.gone!;
    const orphan = { model: "chat", messages: MESSAGES, max_tokens: ORPHAN_TOKENS, ignore_eos: true };
    const streamed = { ...orphan, stream: true, stream_options: { include_usage: true } };
    const peak = samplePeak(gone);
    const outcomes: string[] = [];
    // In turn: each client's close has reached the gateway, and its reservation's reply (and slot release) came
    // back, before the next one connects; an orphan sent upstream would still be running then. First two that
    // leave during admission, then three during the reservation (two in a row without streaming, so orphans overlap).
    for (const [body, handshake] of [
      [streamed, false],
      [orphan, false],
      [streamed, true],
      [orphan, true],
      [orphan, true],
    ] as const) {
      outcomes.push(await sendAndLeave(gone.port, key, body, handshake));
      await sleep(REDIS_DELAY_MS * 3);
    }
    // Long enough for an orphan to finish upstream (and its answer to meet the closed response), then the grace
    // after which an unsettled reservation is refunded.
    await sleep(ORPHAN_TOKENS * TOKEN_MS + SETTLE_GRACE_MS + SLACK_MS);
    const findings = {
      gateway: exitOf(gone, stderr.get(gone)!),
      outcomes,
      upstreamRequests: gone.sims[0]!.stats().requestsTotal,
      peakRunningAtOnce: peak.stop(),
      // Missing from a full bucket (0: every abandoned reservation refunded, nothing charged).
      probe: await probe(gone, "gone"),
    };
    const { completedTotal, cancelledTotal } = gone.sims[0]!.stats();
    console.log(`client gone during the shared limiter's awaits: ${JSON.stringify({ ...findings, completedTotal, cancelledTotal }, null, 1)}`);
    expect(findings).toEqual({
      gateway: null,
      outcomes: [...Array(2).fill("left after its last byte"), ...Array(3).fill("left after 100 Continue and its last byte")],
      upstreamRequests: 0,
      peakRunningAtOnce: 0,
      probe: { status: 200, tokensMissing: 0, limitTokens: String(TPM) },
    });
    // The delays were the proxy's: the gateway never took Redis for down (the figures above are the shared store's).
    expect(await gone.metric('gateway_rate_limit_store_transitions_total\\{to="down"\\}')).toBe(0);
  }, 20_000);

  it("refunds the reservation made after the client left when validation then refuses the request", async () => {
    const key = refused.keys.refused!;
    // Valid JSON, invalid for the schema (temperature is 0..2): refused after the reservation, by the handler.
    const invalid = { model: "chat", messages: MESSAGES, max_tokens: 500, temperature: 99 };
    const outcomes: string[] = [];
    for (let i = 0; i < 2; i++) {
      outcomes.push(await sendAndLeave(refused.port, key, invalid, true));
      await sleep(REDIS_DELAY_MS * 3);
    }
    await sleep(SETTLE_GRACE_MS + SLACK_MS);
    const findings = {
      gateway: exitOf(refused, stderr.get(refused)!),
      outcomes,
      upstreamRequests: refused.sims[0]!.stats().requestsTotal,
      probe: await probe(refused, "refused"),
    };
    console.log(`client gone before a validation refusal: ${JSON.stringify(findings, null, 1)}`);
    expect(findings).toEqual({
      gateway: null,
      outcomes: ["left after 100 Continue and its last byte", "left after 100 Continue and its last byte"],
      upstreamRequests: 0,
      probe: { status: 200, tokensMissing: 0, limitTokens: String(TPM) },
    });
  }, 15_000);
});
