// A structural lint of gateway/Dockerfile and .dockerignore (no Docker engine or hadolint here): the final stage
// is pinned, non-root, holds only the build output and no package manager runs in it.
import * as fs from "fs";
import * as path from "path";
import { BUNDLE } from "../../scripts/build-gateway";
import { PORTS } from "./constants";
import { RUNTIME_UID } from "./workload";

const ROOT = path.resolve(__dirname, "..", "..");

interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** Instructions of a Dockerfile: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => {
      const [op = "", ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** Global ARGs, then one list of instructions per stage (starting with its FROM). */
function stages(instructions: Instruction[]): { args: Record<string, string>; stages: Instruction[][] } {
  const args: Record<string, string> = {};
  const out: Instruction[][] = [];
  for (const i of instructions) {
    if (i.op === "FROM") out.push([i]);
    else if (out.length > 0) out[out.length - 1]?.push(i);
    else if (i.op === "ARG") {
      const [k = "", v = ""] = i.args.split("=");
      args[k] = v;
    }
  }
  return { args, stages: out };
}

describe("gateway/Dockerfile", () => {
  const { args, stages: all } = stages(parseDockerfile(fs.readFileSync(path.join(ROOT, "gateway", "Dockerfile"), "utf8")));
  const build = all[0] ?? [];
  const final = all[all.length - 1] ?? [];
  const ops = (stage: Instruction[], op: string) => stage.filter((i) => i.op === op).map((i) => i.args);
  const baseOf = (stage: Instruction[]) => (stage[0]?.args.split(/\s+/)[0] ?? "").replace(/^\$\{(\w+)\}$/, (_, name: string) => args[name] ?? "");

  test("multi-stage: a build stage and a runtime stage", () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(build[0]?.args).toMatch(/ AS build$/i);
  });

  test("base images are small images of a supported Node LTS line (22 or 24), pinned to a version (never latest)", () => {
    for (const stage of [build, final]) {
      const base = baseOf(stage);
      expect(base).toMatch(/^(node:(22|24)\.\d+\.\d+-(alpine|slim)|gcr\.io\/distroless\/nodejs(22|24))/);
      expect(base).not.toMatch(/:latest$/);
    }
  });

  test("its Node is the one engines, CI and the tests agree on: engines' floor, and what .ci/node installs", () => {
    const version = /^node:(\d+\.\d+\.\d+)-/.exec(baseOf(final))?.[1];
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${version}`);
    // .ci/node reads the same ARG; CI runs everything after it.
    expect(/^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)/m.exec(fs.readFileSync(path.join(ROOT, "gateway", "Dockerfile"), "utf8"))?.[1]).toBe(version);
    const ci = fs.readFileSync(path.join(ROOT, ".ci", "run"), "utf8");
    expect(ci.indexOf('PATH="$(bash .ci/node):$PATH"')).toBeGreaterThan(-1);
    expect(ci.indexOf('PATH="$(bash .ci/node):$PATH"')).toBeLessThan(ci.indexOf("npm ci"));
  });

  test("the build stage runs the same npm run build:gateway as the tests", () => {
    expect(ops(build, "RUN")).toContain("npm run build:gateway");
  });

  test("the final stage copies only the build output and runs no package manager", () => {
    expect(ops(final, "COPY")).toEqual([expect.stringMatching(/^--from=build (--chown=0:0 )?\/src\/dist\/gateway\/ \/app\/$/)]);
    expect(ops(final, "ADD")).toEqual([]);
    for (const run of ops(final, "RUN")) expect(run).not.toMatch(/\b(npm|npx|yarn|pnpm|corepack)\s+(install|ci|add|i)\b/);
    // The base image's npm is removed, so nothing can install into the image later either.
    expect(ops(final, "RUN").join(" ")).toMatch(/rm -rf .*\/usr\/local\/lib\/node_modules/);
  });

  test("runs as a numeric non-root user, the one the pod's securityContext names", () => {
    const users = ops(final, "USER");
    expect(users).toEqual([`${RUNTIME_UID}:${RUNTIME_UID}`]);
    expect(RUNTIME_UID).toBeGreaterThan(0);
  });

  test("the final stage is labelled with the release: org.opencontainers.image.version is package.json's version", () => {
    const labels = Object.fromEntries([...ops(final, "LABEL").join(" ").matchAll(/([\w.-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string; license: string };
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(labels).toEqual({ "org.opencontainers.image.title": "ai-platform-gateway", "org.opencontainers.image.version": pkg.version, "org.opencontainers.image.licenses": pkg.license });
  });

  test("exec-form entrypoint: node is PID 1 and gets SIGTERM; ports match the pod", () => {
    const [entrypoint] = ops(final, "ENTRYPOINT");
    expect(JSON.parse(entrypoint ?? "null")).toEqual(["node", `/app/${BUNDLE}`]);
    expect(ops(final, "EXPOSE")).toEqual([`${PORTS.http} ${PORTS.metrics}`]);
    expect(ops(final, "ENV").join(" ")).toContain(`PORT=${PORTS.http}`);
  });
});

describe(".dockerignore", () => {
  const lines = fs
    .readFileSync(path.join(ROOT, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));

  test("excludes everything, then lets in exactly what the build stage copies", () => {
    expect(lines[0]).toBe("**");
    const included = lines.filter((l) => l.startsWith("!")).map((l) => l.slice(1).replace(/\/\*\*$/, ""));
    const { stages: all } = stages(parseDockerfile(fs.readFileSync(path.join(ROOT, "gateway", "Dockerfile"), "utf8")));
    const sources = (all[0] ?? [])
      .filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(included.sort()).toEqual([...new Set(sources)].sort());
  });
});
