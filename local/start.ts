/**
 * `npm start`: the embedded default. A simulated replica set for each model of the local fleet and the
 * gateway in front of them, on $PORT (default 8080), accepting the key in $GATEWAY_API_KEY (or a fresh one).
 */
import { generateApiKey } from "../gateway/src/auth/api-keys";
import { parseCatalog } from "../gateway/src/config/load-catalog";
import { settingsFromEnv } from "../gateway/src/config/settings";
import { localFleet, startLocalFleet, type LocalModel } from "./fleet";
import { startGateway } from "../gateway/src/server";

async function main(): Promise<void> {
  const givenKey = process.env.GATEWAY_API_KEY;
  const apiKey = givenKey || generateApiKey();
  // Loopback by default: the embedded default is for the machine it runs on.
  const settings = settingsFromEnv(process.env, {
    apiKey,
    host: process.env.GATEWAY_HOST ?? "127.0.0.1",
    // Often enough that a model woken from zero serves within half a second of loading.
    healthIntervalMs: Number(process.env.GATEWAY_HEALTH_INTERVAL_MS ?? 500),
    // Ephemeral unless chosen, so a local run never collides with a Prometheus on 9090.
    metricsPort: Number(process.env.GATEWAY_METRICS_PORT ?? 0),
    // No load balancer in front locally: Ctrl-C need not wait for endpoint removal.
    drainDelayMs: Number(process.env.GATEWAY_DRAIN_DELAY_MS ?? 0),
    // A model at zero is listed, so it can be picked (its first request wakes it).
    listWakeModels: process.env.GATEWAY_LIST_WAKE_MODELS ?? "true",
  });

  const local = localFleet();
  const fleet = await startLocalFleet(local, (line) => process.stderr.write(`local scaler: ${line}\n`));
  const gateway = await startGateway({ settings, catalog: parseCatalog(fleet.catalog, "local fleet") });
  fleet.attach(gateway.registry);
  const models = local.map(describe);
  const chatModel = gateway.registry.all().find((p) => p.model.category === "generative")?.model.id ?? "MODEL";
  const base = `${gateway.url}/v1`;
  // The key is printed once; the examples read it from the variables the OpenAI SDKs already honour.
  process.stderr.write(
    [
      "",
      "AI Platform gateway is up (simulated model servers, no GPU needed).",
      `  Models: ${models.join(", ")}`,
      givenKey ? "  API key: the value of $GATEWAY_API_KEY" : "  API key: generated for this run (set GATEWAY_API_KEY to choose your own)",
      "",
      "Paste into a shell:",
      `  export OPENAI_BASE_URL=${base}`,
      `  export OPENAI_API_KEY=${givenKey ? '"$GATEWAY_API_KEY"' : apiKey}`,
      `  curl -s "$OPENAI_BASE_URL/chat/completions" -H "Authorization: Bearer $OPENAI_API_KEY" \\`,
      `    -H "Content-Type: application/json" -d '{"model":"${chatModel}","messages":[{"role":"user","content":"Say hello"}]}'`,
      "",
      "Or from Node with the official SDK (it reads both variables):",
      `  node -e 'new (require("openai"))().chat.completions.create({model:"${chatModel}",messages:[{role:"user",content:"Say hello"}]}).then(r=>console.log(r.choices[0].message.content))'`,
      "",
      `Base URL: ${base}    Metrics: ${gateway.metricsUrl}    Ctrl-C stops it.`,
      "",
    ].join("\n"),
  );

  const stop = async () => {
    await gateway.close();
    await fleet.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop());
  process.once("SIGTERM", () => void stop());
}

/** "qwen3-8b (generative, 1 replica)"; a model at zero also says so and how long it takes to wake. */
function describe(m: LocalModel): string {
  const replicas = `${m.replicas} replica${m.replicas > 1 ? "s" : ""}`;
  const cold = m.scaleToZero ? `, scales to zero, wakes in ~${Math.round(m.scaleToZero.loadMs / 1000)} s` : "";
  return `${m.id} (${m.category}, ${replicas}${cold})`;
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
