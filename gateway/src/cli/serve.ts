/**
 * The gateway process in a cluster: catalog from $GATEWAY_CATALOG, hashed keys from $GATEWAY_KEYS_FILE
 * (and/or one key in $GATEWAY_API_KEY). Exits non-zero with a message naming the bad setting.
 */
import { loadCatalogFile } from "../config/load-catalog";
import { settingsFromEnv } from "../config/settings";
import { createLogger } from "../observability/logger";
import { startGateway } from "../server";

async function main(): Promise<void> {
  const settings = settingsFromEnv();
  if (!settings.catalogFile) throw new Error("GATEWAY_CATALOG: required (path of the model catalog file)");
  const log = createLogger(settings.logLevel);
  const gateway = await startGateway({ settings, catalog: loadCatalogFile(settings.catalogFile), log });
  const stop = () => void gateway.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
