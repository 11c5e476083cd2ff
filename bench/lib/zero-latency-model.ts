import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSimulator } from "../../scripts/lib/processes";

/**
 * What a benchmark of the proxy's own cost stands in front of: one simulator that answers at once (no token
 * latency, no prefix cache, room for any concurrency), and a catalog file serving it as `model`.
 */
export async function startZeroLatencyModel(model: string, prefix: readonly string[], dirPrefix: string): Promise<{ proc: ChildProcess; url: string; dir: string; catalog: string }> {
  const sim = await spawnSimulator(["--model", model, "--port", "0", "--ttft-ms", "0", "--itl-ms", "0", "--prefill-time-per-token-ms", "0", "--max-num-seqs", "4096", "--no-prefix-cache"], prefix);
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const catalog = join(dir, "catalog.json");
  writeFileSync(catalog, JSON.stringify({ models: [{ id: model, category: "generative", maxConcurrency: 4096, upstream: { mode: "endpoints", endpoints: [{ url: sim.url }] } }] }));
  return { ...sim, dir, catalog };
}
