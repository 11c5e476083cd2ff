// The gateway's release version (package.json's), for gateway_build_info. The image's bundle has it written in at build
// time (scripts/build-gateway.ts defines __GATEWAY_VERSION__), so nothing is read at start; run from the sources
// (tests, npm start) it is read from the repository's package.json.
import { readFileSync } from "node:fs";
import * as path from "node:path";

declare const __GATEWAY_VERSION__: string | undefined;

function fromPackageJson(): string {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

export const GATEWAY_VERSION: string = typeof __GATEWAY_VERSION__ === "string" ? __GATEWAY_VERSION__ : fromPackageJson();
