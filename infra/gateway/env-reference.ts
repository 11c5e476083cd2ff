// The gateway process's environment variables as docs/configuration.md lists them: every setting of
// gateway/src/config/settings.ts under its variable (SETTINGS_ENV), with the description and default its schema
// holds, and how a stack sets it (STACK_SET_ENV, else `gateway:env`). The client limits (LIMIT_SETTINGS) are listed
// once, variable and default included, in gateway-api.md's Limits table (generated from the same schema).
import type { z } from "zod";
import { GatewaySettingsSchema, LIMIT_SETTINGS, SETTINGS_ENV, settingsFromEnv, type GatewaySettings } from "../../gateway/src/config/settings";
import { type EnvReference, type EnvRow, formatDefault } from "../platform/config-reference";
import { STACK_SET_ENV } from "./config";

type SettingKey = keyof GatewaySettings;

function shownDefault(key: SettingKey, value: unknown): string {
  if (value === undefined) return "unset";
  if (Array.isArray(value)) return value.length === 0 ? "empty" : `\`${value.join(",")}\``;
  if (typeof value === "number") {
    const readable = formatDefault(key, value);
    return readable.replace(/,/g, "").startsWith(String(value)) ? `\`${value}\`` : `\`${value}\` (${readable})`;
  }
  return `\`${String(value)}\``;
}

/** One row per setting but the client limits, in the schema's order. */
export function gatewayEnvRows(): EnvRow[] {
  const defaults = settingsFromEnv({});
  const shape = GatewaySettingsSchema.shape as Record<SettingKey, z.ZodType>;
  const limits = new Set<string>(LIMIT_SETTINGS);
  return (Object.keys(shape) as SettingKey[])
    .filter((key) => !limits.has(key))
    .map((key) => {
      const name = SETTINGS_ENV[key];
      const description = (shape[key].meta() as { description?: string } | undefined)?.description ?? "";
      return { name, default: shownDefault(key, defaults[key]), description, setBy: STACK_SET_ENV[name] ?? "" };
    });
}

export function gatewayEnvReference(): EnvReference {
  return {
    heading: "Gateway environment variables",
    intro: [
      "The gateway reads its settings from these variables, in the cluster as under `npm start`; a value it refuses stops",
      "it at start, naming the variable. The last column says where a stack takes the value from; empty: `gateway:env`",
      `(which refuses the others). The ${LIMIT_SETTINGS.length} limits a client can meet (\`GATEWAY_MAX_CONNECTIONS\` …) are in`,
      "[gateway-api.md](gateway-api.md#limits), each with its variable and default. The trace exporter also reads",
      "`OTEL_EXPORTER_OTLP_HEADERS`, which the stack does not set.",
    ].join("\n"),
    rows: gatewayEnvRows(),
  };
}
