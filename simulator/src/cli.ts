import { SimulatorConfigSchema } from "./config";
import { CLI_USAGE, parseCliArgs } from "./cli-args";
import { startSimulator } from "./server";

/**
 * Runs one simulator as its own OS process (fault tests kill it for real). Prints one JSON line
 * `{"event":"listening","url":...}` on stdout when ready; SIGTERM/SIGINT close it gracefully and exit 0.
 */
async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseCliArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${CLI_USAGE}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(`${CLI_USAGE}\n`);
    return;
  }
  const checked = SimulatorConfigSchema.safeParse(parsed.config);
  if (!checked.success) {
    process.stderr.write(`invalid configuration:\n${checked.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n")}\n`);
    process.exit(2);
  }

  const sim = await startSimulator(checked.data);
  process.stdout.write(
    `${JSON.stringify({ event: "listening", url: sim.url, port: sim.port, models: sim.config.models, kind: sim.config.kind, pid: process.pid })}\n`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`simulator: ${signal}, shutting down\n`);
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`simulator failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
