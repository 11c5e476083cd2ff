// `npm run build:gateway [-- --out dir]`: the gateway process as one self-contained file for the container image.
// esbuild bundles gateway/src/cli/serve.ts with every runtime dependency it imports (express, pino, ioredis,
// prom-client, undici, yaml, zod) into <out>/serve.js, next to a package.json without dependencies. Nothing else
// is needed at run time: no node_modules, so no Pulumi packages and no dev dependencies can reach the image.
import * as fs from "fs";
import * as path from "path";
import { parseArgs } from "util";
import { build, type Metafile } from "esbuild";

const ROOT = path.resolve(__dirname, "..");
export const ENTRY = path.join(ROOT, "gateway", "src", "cli", "serve.ts");
export const DEFAULT_OUT = path.join(ROOT, "dist", "gateway");
export const BUNDLE = "serve.js";

export interface GatewayBuild {
  readonly outDir: string;
  /** Packages bundled into serve.js (from the esbuild metafile), e.g. `express`, `@scope/name`. */
  readonly packages: string[];
}

/** `node_modules/@a/b/x.js` → `@a/b`; `node_modules/a/x.js` → `a` (the innermost node_modules wins). */
export function packageOf(input: string): string | undefined {
  const at = input.lastIndexOf("node_modules/");
  if (at === -1) return undefined;
  return /^((?:@[^/]+\/)?[^/]+)\//.exec(input.slice(at + "node_modules/".length))?.[1];
}

export function bundledPackages(meta: Metafile): string[] {
  return [...new Set(Object.keys(meta.inputs).map(packageOf).filter((p): p is string => p !== undefined))].sort();
}

export async function buildGateway(outDir: string = DEFAULT_OUT): Promise<GatewayBuild> {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const rootPkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string; license?: string; engines: { node: string } };
  const result = await build({
    entryPoints: [ENTRY],
    outfile: path.join(outDir, BUNDLE),
    bundle: true,
    platform: "node",
    target: "node24",
    format: "cjs",
    // Without comments and indentation the bundle is pure ASCII (the comments of some packages are not), so V8
    // holds its source as one byte a character: about 4 MB of heap instead of 10. Names stay, and traces are
    // mapped with the source map as before.
    minifyWhitespace: true,
    sourcemap: "linked",
    metafile: true,
    logLevel: "warning",
    // Licence notices of the bundled packages go to serve.js.LEGAL.txt, which ships in the image.
    legalComments: "linked",
    // The release version in the bundle (gateway_build_info, gateway/src/observability/version.ts): the image reads no file for it.
    define: { __GATEWAY_VERSION__: JSON.stringify(rootPkg.version) },
  });
  const packages = bundledPackages(result.metafile);
  // No "dependencies": the bundle carries them. `type` pins CommonJS whatever surrounds the directory.
  const pkg = {
    name: "ai-platform-gateway",
    version: rootPkg.version,
    private: true,
    license: rootPkg.license,
    type: "commonjs",
    main: BUNDLE,
    engines: rootPkg.engines,
    // No --enable-source-maps at run time (see gateway/Dockerfile): traces are mapped offline from the .map.
    scripts: { start: `node ${BUNDLE}` },
  };
  fs.writeFileSync(path.join(outDir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  fs.writeFileSync(path.join(outDir, "bundled-packages.json"), JSON.stringify(packages, null, 2) + "\n");
  return { outDir, packages };
}

if (require.main === module) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  buildGateway(values.out ? path.resolve(values.out) : DEFAULT_OUT).then(
    (b) => console.log(`gateway bundled into ${path.relative(process.cwd(), b.outDir) || "."}/${BUNDLE} (${b.packages.length} packages: ${b.packages.join(", ")})`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
