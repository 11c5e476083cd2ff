import { request, type Dispatcher } from "undici";
import type { Replica } from "./replica";

/**
 * Reads the gauges routing needs from each ready replica's Prometheus endpoint, about once a second:
 * vllm:num_requests_running, vllm:num_requests_waiting and vllm:kv_cache_usage_perc (the signals llm-d's
 * endpoint picker uses). Only those lines are looked at, so a full exposition parser is not needed.
 */
export const LOAD_METRICS = {
  waiting: "vllm:num_requests_waiting",
  running: "vllm:num_requests_running",
  kvCacheUsage: "vllm:kv_cache_usage_perc",
} as const;

/** Sums a gauge over its label sets (one model per server, but be robust to several). */
export function readGauge(exposition: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of exposition.split("\n")) {
    if (!line.startsWith(name) || line.startsWith("#")) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== "{" && rest[0] !== " ") continue; // a longer metric name sharing the prefix
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) total = (total ?? 0) + value;
  }
  return total;
}

export class LoadScraper {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly replicas: () => readonly Replica[],
    private readonly dispatcher: Dispatcher,
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    /** Also reads what LoRA adapters a replica holds (a model with a `lora` block). */
    private readonly syncAdapters?: (replica: Replica) => Promise<void>,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.scrapeAll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  async scrapeAll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const replicas = this.replicas().filter((r) => r.ready && r.activeChecks);
      const syncAdapters = this.syncAdapters;
      await Promise.all([...replicas.map((r) => this.scrape(r)), ...(syncAdapters ? replicas.filter((r) => r.adapters).map((r) => syncAdapters(r)) : [])]);
    } finally {
      this.running = false;
    }
  }

  private async scrape(replica: Replica): Promise<void> {
    try {
      const res = await request(`${replica.url}/metrics`, { dispatcher: this.dispatcher, signal: AbortSignal.timeout(this.timeoutMs) });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return;
      }
      const text = await res.body.text();
      const gauge = (name: string) => readGauge(text, name) ?? 0;
      replica.recordLoad(gauge(LOAD_METRICS.waiting), gauge(LOAD_METRICS.kvCacheUsage), gauge(LOAD_METRICS.running));
    } catch {
      // A replica without metrics is routed on the gateway's own in-flight count only.
    }
  }
}
