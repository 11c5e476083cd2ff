import { Registry } from "prom-client";
import { EventLoopDelay } from "../../src/observability/event-loop-delay";

/** Blocks the event loop for `ms`, as a long synchronous task would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function read(registry: Registry): Promise<{ p99: number; max: number }> {
  const values = await registry.getMetricsAsJSON();
  const value = (name: string) => values.find((m) => m.name === name)!.values[0]!.value;
  return { p99: value("gateway_event_loop_delay_p99_seconds"), max: value("gateway_event_loop_delay_max_seconds") };
}

describe("the event loop's delay", () => {
  let monitor: EventLoopDelay | undefined;
  afterEach(() => monitor?.stop());

  it("shows a stall of the event loop in the window a scrape closes", async () => {
    const registry = new Registry();
    monitor = new EventLoopDelay(registry, 0);
    await tick(50);
    await read(registry); // closes the window before the stall
    await tick(30);
    block(300);
    await tick(30);
    const { p99, max } = await read(registry);
    // The timer that should have fired during the stall fired at its end: at least 300 ms late, less one period.
    expect(max).toBeGreaterThanOrEqual(0.28);
    expect(p99).toBeGreaterThan(0);
  });

  it("keeps showing the last closed window until the next one is long enough", async () => {
    const registry = new Registry();
    monitor = new EventLoopDelay(registry, 60 * 60 * 1000);
    await tick(30);
    block(200);
    await tick(30);
    // The first window (since the monitor started) is not an hour old: nothing was closed yet.
    expect(await read(registry)).toEqual({ p99: 0, max: 0 });
  });
});
