/**
 * The local stand-in for KEDA: a model that scales to zero starts with no simulated replica; the first request the
 * gateway holds for it starts its replicas (each loading for `loadMs`), and they stop after `idleStopMs` without
 * demand. It reads the demand in-process from the gateway's model pool, as KEDA reads the gateway's
 * held and in-flight gauges in the cluster.
 */
import { EventEmitter } from "node:events";
import { startSimulator, type RunningSimulator, type SimulatorConfigInput } from "../simulator/src";
import { ReservedPort } from "./reserved-port";
import type { ModelRegistry } from "../gateway/src/upstream/registry";

export interface ScaleToZero {
  /** How long a woken replica loads before it answers (the simulator's startupDelayMs), ms. */
  loadMs: number;
  /** How long without demand before the replicas stop, ms. */
  idleStopMs: number;
}

/** One model the scaler owns: how many replicas a wake starts and how each simulator runs. */
export interface ScaledModel {
  id: string;
  replicas: number;
  scaleToZero: ScaleToZero;
  simulator: SimulatorConfigInput;
}

/** What the scaler needs of the gateway: a model's demand, and which replica addresses it routes to. */
export interface GatewayView {
  /** Requests held, queued or in flight for the model. */
  demand(id: string): number;
  /** The replicas the gateway may route to (like the addresses a headless Service publishes). */
  publish(id: string, urls: readonly string[]): void;
}

export type ScaledState = "asleep" | "waking" | "awake" | "sleeping";

/** How often demand is read: well under the load time, cheap enough to ignore. */
const POLL_MS = 100;

/** The gateway's model pools as a GatewayView (the composition root has the gateway object). */
export function registryView(registry: Pick<ModelRegistry, "get">): GatewayView {
  return {
    demand: (id) => {
      const pool = registry.get(id);
      if (!pool) return 0;
      return pool.heldLength + pool.queueLength + pool.replicas.reduce((n, r) => n + r.inFlight, 0);
    },
    publish: (id, urls) => registry.get(id)?.setReplicaUrls(urls),
  };
}

class Slot {
  sim: RunningSimulator | undefined;
  constructor(
    readonly port: ReservedPort,
    readonly url: string,
  ) {}
}

class Scaled {
  state: ScaledState = "asleep";
  /** When demand was last seen, or the load ended, whichever is later (ms, performance clock). */
  lastBusy = 0;
  wakes = 0;
  /** Wake and sleep run one after the other. */
  chain: Promise<void> = Promise.resolve();
  constructor(
    readonly model: ScaledModel,
    readonly slots: Slot[],
  ) {}
}

/** Events: `wake` (id) when a model's replicas start loading, `awake` (id) once loaded, `sleep` (id) once stopped. */
export class LocalScaler extends EventEmitter {
  private readonly models = new Map<string, Scaled>();
  private view: GatewayView | undefined;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly host: string,
    private readonly log: (line: string) => void,
  ) {
    super();
  }

  /** Reserves a loopback address for every replica of every model; nothing runs until start(). */
  static async create(models: readonly ScaledModel[], log: (line: string) => void = () => undefined, host = "127.0.0.1"): Promise<LocalScaler> {
    const scaler = new LocalScaler(host, log);
    try {
      for (const m of models) {
        const slots: Slot[] = [];
        for (let i = 0; i < m.replicas; i++) {
          const port = await ReservedPort.reserve(host);
          slots.push(new Slot(port, `http://${host}:${port.port}`));
        }
        scaler.models.set(m.id, new Scaled(m, slots));
      }
    } catch (err) {
      await scaler.close();
      throw err;
    }
    return scaler;
  }

  /** The replica addresses of a model, for the catalog. */
  urls(id: string): string[] {
    return this.models.get(id)?.slots.map((s) => s.url) ?? [];
  }

  state(id: string): ScaledState | undefined {
    return this.models.get(id)?.state;
  }

  /** How many times the model has woken. */
  wakes(id: string): number {
    return this.models.get(id)?.wakes ?? 0;
  }

  /** The running simulators (none while a model sleeps). */
  simulators(id: string): RunningSimulator[] {
    return (this.models.get(id)?.slots ?? []).flatMap((s) => (s.sim ? [s.sim] : []));
  }

  /** Starts watching the gateway: every model is taken out of its routing (asleep) until demand wakes it. */
  start(view: GatewayView): void {
    this.view = view;
    for (const m of this.models.values()) view.publish(m.model.id, []);
    this.timer = setInterval(() => this.tick(), POLL_MS);
    this.timer.unref();
  }

  private tick(): void {
    const view = this.view!;
    const now = performance.now();
    for (const m of this.models.values()) {
      const demand = view.demand(m.model.id);
      if (demand > 0) m.lastBusy = Math.max(m.lastBusy, now);
      if (m.state === "asleep" && demand > 0) this.wake(m);
      else if (m.state === "awake" && demand === 0 && now - m.lastBusy >= m.model.scaleToZero.idleStopMs) {
        // Out of routing in the same tick as the idle decision: no request can be sent to a replica that is stopping.
        view.publish(m.model.id, []);
        this.sleep(m);
      }
    }
  }

  private wake(m: Scaled): void {
    m.state = "waking";
    m.wakes += 1;
    const { loadMs } = m.model.scaleToZero;
    this.log(`${m.model.id}: waking (${m.slots.length} replica${m.slots.length > 1 ? "s" : ""}, loading ${formatSeconds(loadMs)})`);
    this.emit("wake", m.model.id);
    const startedAt = performance.now();
    m.chain = m.chain.then(async () => {
      try {
        for (const [i, slot] of m.slots.entries()) {
          await slot.port.release();
          slot.sim = await startSimulator({ ...m.model.simulator, host: this.host, port: slot.port.port, startupDelayMs: loadMs, podName: `${m.model.id}-${i}` });
        }
      } catch (err) {
        this.log(`${m.model.id}: wake failed: ${(err as Error).message}`);
        await this.stopSlots(m);
        m.state = "asleep";
        return;
      }
      // Published while loading: the gateway's health checks see 503 until the load ends, then route to them.
      this.view?.publish(m.model.id, m.slots.map((s) => s.url));
      const left = startedAt + loadMs - performance.now();
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      if (m.state !== "waking") return;
      m.state = "awake";
      m.lastBusy = Math.max(m.lastBusy, performance.now());
      this.log(`${m.model.id}: awake after ${formatSeconds(performance.now() - startedAt)}`);
      this.emit("awake", m.model.id);
    });
  }

  private sleep(m: Scaled): void {
    m.state = "sleeping";
    this.log(`${m.model.id}: idle for ${formatSeconds(m.model.scaleToZero.idleStopMs)}, stopping (scaled to zero)`);
    m.chain = m.chain.then(async () => {
      await this.stopSlots(m);
      m.state = "asleep";
      this.emit("sleep", m.model.id);
    });
  }

  /** Graceful stop of each replica (in-flight requests finish), then its address is held again. */
  private async stopSlots(m: Scaled): Promise<void> {
    for (const slot of m.slots) {
      const sim = slot.sim;
      slot.sim = undefined;
      if (sim) await sim.close();
      await slot.port.hold(this.host);
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(
      [...this.models.values()].map(async (m) => {
        await m.chain;
        await Promise.all(m.slots.map(async (s) => {
          await s.sim?.close();
          s.sim = undefined;
          await s.port.release();
        }));
      }),
    );
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
