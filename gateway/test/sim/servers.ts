import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { Prng } from "../../../simulator/src/prng";
import type { AdapterServer } from "../../src/upstream/lora/adapter-client";
import type { UpstreamTransport } from "../../src/upstream/send";
import type { VirtualClock } from "./virtual-clock";

/** One simulated model server: whether it accepts connections, what adapters it has registered, what it runs. */
export class SimServer {
  up = true;
  readonly adapters: Set<string>;
  running = 0;
  /** Requests it received (whole bodies), by adapter or base model name. */
  received = 0;
  /** Waiting requests it reports on /metrics (a saturated engine). */
  waiting = 0;

  constructor(
    readonly url: string,
    readonly preloaded: readonly string[],
  ) {
    this.adapters = new Set(preloaded);
  }

  /** A restart: it comes back holding only what it loads at start. */
  restart(): void {
    this.adapters.clear();
    for (const a of this.preloaded) this.adapters.add(a);
  }
}

/** What the simulation checks as a request reaches a model server (the invariants that need that moment). */
export interface SendCheck {
  (url: string, model: string, signal: AbortSignal): void;
}

/**
 * An undici-like answer body: it ends when the simulation says the generation is over, and a destroy before that
 * errors as undici's BodyReadable does (RequestAbortedError): a listener must be there, or the process would end.
 */
export class SimAnswerBody extends Readable {
  override _read(): void {}

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    cb(err ?? (this.readableEnded ? null : Object.assign(new Error("Request aborted"), { code: "UND_ERR_ABORTED" })));
  }
}

export interface SimServersOptions {
  /** Time for a request's body to reach the server and its headers to come back, ms. */
  latencyMs: () => number;
  /** An adapter load's time, ms. */
  loadMs: () => number;
  /** A load fails this often. */
  loadFailureRate: number;
  /** A listing's answer comes this long after the state it shows, ms (stale listings). */
  listingDelayMs: () => number;
}

/** The model servers of one simulation, reached through the gateway's transport and adapter-client interfaces. */
export class SimServers {
  readonly byUrl = new Map<string, SimServer>();
  /** Called for every request that reaches a server (after its body is in). */
  onSend: SendCheck | undefined;
  /** Called when a load starts on a server (the invariant on the gateway's view of it). */
  onLoad: ((url: string, name: string) => void) | undefined;

  constructor(
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly o: SimServersOptions,
  ) {}

  add(server: SimServer): SimServer {
    this.byUrl.set(server.url, server);
    return server;
  }

  /** The gateway's upstream transport: refused while the server is down, else the body is read and answered. */
  readonly transport: UpstreamTransport = (url, options) => {
    const server = this.byUrl.get(url.replace(/\/v1\/.*$/, ""));
    return new Promise((resolve, reject) => {
      const refused = () => reject(Object.assign(new Error(`connect ECONNREFUSED ${url}`), { code: "ECONNREFUSED" }));
      if (!server?.up) {
        this.clock.after(1, refused);
        return;
      }
      const chunks: Buffer[] = [];
      options.body.on("data", (c: Buffer) => chunks.push(c));
      options.body.on("end", () => {
        const { model } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string };
        this.onSend?.(server.url, model, options.signal);
        server.received += 1;
        this.clock.after(this.o.latencyMs(), () => {
          if (options.signal.aborted) return reject(Object.assign(new Error("aborted"), { code: "UND_ERR_ABORTED" }));
          if (!server.up) return reject(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }));
          if (model !== "m" && !server.adapters.has(model)) {
            return resolve(answer(404, Readable.from([Buffer.from(JSON.stringify({ error: { message: `The model \`${model}\` does not exist.`, type: "NotFoundError", param: "model", code: 404 } }))])));
          }
          server.running += 1;
          const body = new SimAnswerBody();
          body.once("close", () => (server.running -= 1));
          resolve(answer(200, body));
        });
      });
    });
  };

  /** vLLM's runtime LoRA routes and listing. */
  readonly adapterServer: AdapterServer = {
    load: (url, name) => {
      this.onLoad?.(url, name);
      return this.later(this.o.loadMs(), url, (server) => {
        if (this.rng.next() < this.o.loadFailureRate) throw new Error("load answered 500: simulated failure");
        server.adapters.add(name);
      });
    },
    unload: (url, name) => this.later(this.o.latencyMs(), url, (server) => void server.adapters.delete(name)),
    listed: (url) => {
      const server = this.byUrl.get(url);
      if (!server?.up) return Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }));
      // What it holds now, answered later: a listing may arrive after loads and unloads it did not see.
      const seen = [...server.adapters];
      return new Promise((resolve) => this.clock.after(this.o.listingDelayMs(), () => resolve(seen)));
    },
  };

  private later(ms: number, url: string, act: (server: SimServer) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.clock.after(ms, () => {
        const server = this.byUrl.get(url);
        if (!server?.up) return reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }));
        try {
          act(server);
          resolve();
        } catch (err) {
          reject(err as Error);
        }
      });
    });
  }
}

function answer(statusCode: number, body: Readable): Dispatcher.ResponseData {
  return { statusCode, headers: { "content-type": "application/json" }, body, trailers: {}, opaque: null, context: {} } as unknown as Dispatcher.ResponseData;
}
